'use strict';

/**
 * A Zapier search for each operation of the manifest (`definition.searches`). A search always
 * returns an array, as Zapier wants: a list operation returns its records (a paged list every
 * page up to the limit input), a single-record operation returns `[record]`, or `[]` when the
 * connector finds none (an empty answer or a 404).
 */

const { isEmpty, pick, toList } = require('./connector');
const { listProblem, objectProblem } = require('./shape');

/** @typedef {import('zapier-platform-core').ZObject} ZObject */
/** @typedef {import('zapier-platform-core').Bundle} Bundle */
/** @typedef {import('./types').SearchInput} SearchInput */

const truthy = ['true', 'yes', '1'];
const falsy = ['false', 'no', '0'];

/**
 * An input's value as the connector takes it (a string), or undefined when it is empty.
 * Zapier may send a boolean or a number as text, and a list as an array or comma-separated text.
 * @param {ZObject} z
 * @param {string} name the connector's name, for messages
 * @param {SearchInput} input
 * @param {unknown} value
 * @returns {string | undefined}
 */
const inputValue = (z, name, input, value) => {
  const bad = (/** @type {string} */ what) => new z.errors.Error(`${name}: ${input.label} (${input.key}) ${what}.`, 'invalid_input', 400);
  if (input.list) {
    const values = toList(value);
    return values.length > 0 ? values.join(',') : undefined;
  }
  if (isEmpty(value)) return undefined;
  const text = String(Array.isArray(value) ? value[0] : value).trim();
  if (text === '') return undefined;
  if (input.type === 'boolean') {
    if (truthy.includes(text.toLowerCase())) return 'true';
    if (falsy.includes(text.toLowerCase())) return 'false';
    throw bad('must be true or false');
  }
  if (input.type === 'integer') {
    const number = Number(text);
    const from = input.minimum !== undefined ? input.minimum : -Infinity;
    const to = input.maximum !== undefined ? input.maximum : Infinity;
    if (!Number.isInteger(number) || number < from || number > to) {
      const range = input.minimum !== undefined && input.maximum !== undefined ? ` from ${input.minimum} to ${input.maximum}` : '';
      throw bad(`must be a whole number${range}`);
    }
    return String(number);
  }
  return text;
};

/**
 * @param {import('./connector').Connector} connector
 * @param {import('./types').SearchSpec} spec
 */
const search = (connector, spec) => {
  /**
   * The request's URL (at the connection's base URL), query and (for a paged list) limit from the inputs.
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const requestOf = (z, bundle) => {
    const inputData = bundle.inputData || {};
    /** @type {Record<string, string>} */
    const pathValues = {};
    /** @type {Record<string, string>} */
    const params = { ...spec.request.query };
    let limit = 0;
    for (const input of spec.inputs) {
      let value = inputValue(z, connector.name, input, inputData[input.key]);
      if (value === undefined && input.default !== undefined) value = inputValue(z, connector.name, input, input.default);
      if (value === undefined) {
        if (input.required) throw new z.errors.Error(`${connector.name}: ${input.label} (${input.key}) is required.`, 'missing_parameter', 400);
        continue;
      }
      if (input.in === 'path') pathValues[input.key] = value;
      else if (input.in === 'query') params[input.param] = value;
      else limit = Number(value);
    }
    const url = connector.apiUrl(z, bundle, connector.fillPath(spec.request.path, pathValues, z));
    return { url, params, limit };
  };

  /**
   * The records of an answer: the `items` field, else the answer itself.
   * @param {unknown} body
   * @returns {unknown}
   */
  const recordsOf = (body) => (spec.result.items ? pick(body, spec.result.items) : body);

  /**
   * The records of an answer, each an object with an id; a body without the list (an object
   * where a list belongs, a list of anything else) is an error, never an empty result.
   * @param {ZObject} z
   * @param {import('zapier-platform-core').HttpResponse} response
   * @returns {unknown[]}
   */
  const checkedRecords = (z, response) => {
    const items = spec.result.items;
    const problem = items
      ? objectProblem(response.data) || (listProblem(recordsOf(response.data), ['id']) || '').replace(/^(.)/, `field '${items}': $1`)
      : listProblem(response.data, ['id']);
    if (problem) throw connector.shapeError(z, response, problem);
    return /** @type {unknown[]} */ (recordsOf(response.data));
  };

  /**
   * Every page of a page-numbered list until `limit` records are read or the list ends.
   * Records are told apart by `id`, so a record that moves across a page boundary while the
   * pages are read is not returned twice.
   * @param {ZObject} z
   * @param {import('./types').SearchPaging} paging
   * @param {Bundle} bundle
   * @param {{url: string, params: Record<string, string>, limit: number}} request
   */
  const readPages = async (z, paging, bundle, request) => {
    const limit = request.limit > 0 ? request.limit : paging.maxSize;
    const size = Math.min(paging.maxSize, limit);
    /** @type {unknown[]} */
    const records = [];
    const seen = new Set();
    for (let page = 1; records.length < limit; page++) {
      const response = await connector.request(z, {
        method: spec.request.method,
        url: request.url,
        params: { ...request.params, [paging.page]: String(page), [paging.size]: String(size) },
        headers: connector.authHeaders(bundle, spec.request.auth),
      });
      const items = checkedRecords(z, response);
      if (items.length === 0) break;
      for (const item of items) {
        const id = pick(item, 'id');
        if (id !== undefined && id !== null) {
          if (seen.has(id)) continue;
          seen.add(id);
        }
        if (records.length < limit) records.push(item);
      }
      const total = pick(response.data, paging.total);
      if (items.length < size || (typeof total === 'number' && page * size >= total)) break;
    }
    return records;
  };

  /**
   * @param {ZObject} z
   * @param {Bundle} bundle
   */
  const perform = async (z, bundle) => {
    const request = requestOf(z, bundle);
    if (spec.paging) return readPages(z, spec.paging, bundle, request);

    const response = await connector.request(z, {
      method: spec.request.method,
      url: request.url,
      params: request.params,
      headers: connector.authHeaders(bundle, spec.request.auth),
      skipThrowForStatus: true,
    });
    // "Not found" is an empty result for a search, not an error.
    if (spec.result.single && response.status === 404) return [];
    if (response.status >= 400) throw connector.errorFor(response, z);
    if (spec.result.single && !spec.result.items) {
      // One record, with its id; `{}` or a list is not a device.
      const problem = objectProblem(response.data, ['id']);
      if (problem) throw connector.shapeError(z, response, problem);
      return [response.data];
    }
    const records = checkedRecords(z, response);
    return spec.result.single ? records.slice(0, 1) : records;
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: { perform, inputFields: spec.inputFields, sample: spec.sample },
  };
};

module.exports = { search, inputValue };
