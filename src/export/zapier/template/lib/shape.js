'use strict';

/**
 * The shape of what the connector answers, checked before the app uses it: a proxy or a
 * broken deployment in front of the connector can answer 200 with HTML, with an object
 * where a list belongs, or with records without an id, and a Zap must stop with a clear
 * error then, never carry on with an empty list or a bad object. Each check returns a
 * problem (what was expected, what came) or null; the caller throws it as a Zapier error.
 */

/** @param {unknown} value */
const kindOf = (value) => {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'nothing' : 'text';
  return `a ${typeof value}`;
};

/** @param {unknown} value */
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** @param {unknown} value */
const isId = (value) => (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));

/**
 * An object (the auth test's answer, a hook, one record).
 * @param {unknown} body
 * @param {string[]} [fields] fields that must be non-empty strings or numbers
 * @param {string[]} [objects] fields that must be objects
 * @returns {string | null}
 */
const objectProblem = (body, fields = [], objects = []) => {
  if (!isObject(body)) return `expected an object, got ${kindOf(body)}`;
  const record = /** @type {Record<string, unknown>} */ (body);
  const missing = fields.find((field) => !isId(record[field])) ?? objects.find((field) => !isObject(record[field]));
  return missing === undefined ? null : `expected an object with '${missing}', got one without it`;
};

/**
 * A list whose entries are objects with the given fields (records: `id`; events: `id`,
 * `type`; dropdown choices: `value`, `label`).
 * @param {unknown} list
 * @param {string[]} fields
 * @returns {string | null}
 */
const listProblem = (list, fields) => {
  if (!Array.isArray(list)) return `expected a list, got ${kindOf(list)}`;
  for (let at = 0; at < list.length; at++) {
    const problem = objectProblem(list[at], fields);
    if (problem) return `entry ${at + 1} of the list: ${problem}`;
  }
  return null;
};

module.exports = { isObject, kindOf, listProblem, objectProblem };
