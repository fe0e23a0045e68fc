/**
 * The shape of what the connector answers, checked before a component uses it: a proxy or a
 * broken deployment in front of the connector can answer 200 with HTML, with an object where a
 * list belongs, or with records without an id, and a step must then fail with a clear error,
 * never go on with an empty list or a bad object. Each check returns a problem (what was
 * expected, what came) or null; `_request` and its callers throw it.
 */

/** How a value looks, for messages. */
export function kindOf(value) {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return value === ""
    ? "nothing"
    : "text";
  return `a ${typeof value}`;
}

export const isObject = (value) => value !== null && typeof value === "object" && !Array.isArray(value);

const isId = (value) => (typeof value === "string" && value !== "") || (typeof value === "number" && Number.isFinite(value));

/**
 * An object (the connection test's answer, a hook, one record) whose `fields` are non-empty
 * strings or numbers and whose `objects` are objects.
 */
export function objectProblem(body, fields = [], objects = []) {
  if (!isObject(body)) return `expected an object, got ${kindOf(body)}`;
  const missing = fields.find((field) => !isId(body[field])) ?? objects.find((field) => !isObject(body[field]));
  return missing === undefined
    ? null
    : `expected an object with '${missing}', got one without it`;
}

/** A list of objects with `fields` (records: `id`; events: `id`, `type`; choices: `value`, `label`). */
export function listProblem(list, fields) {
  if (!Array.isArray(list)) return `expected a list, got ${kindOf(list)}`;
  for (const [
    at,
    entry,
  ] of list.entries()) {
    const problem = objectProblem(entry, fields);
    if (problem) return `entry ${at + 1} of the list: ${problem}`;
  }
  return null;
}

/** The error a component throws for a problem with the answer to `method path`. */
export function shapeError(name, method, path, problem) {
  const error = new Error(`${name}: unexpected answer to ${method} ${path}: ${problem}.`);
  error.status = 502;
  return error;
}
