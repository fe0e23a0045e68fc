/**
 * The shape of what the connector answers, checked before the piece uses it: a proxy or a
 * broken deployment in front of the connector can answer 200 with HTML, with an object where
 * a list belongs, or with records without an id, and a flow must then fail with a clear error,
 * never go on with an empty list or a bad object. Each check returns a problem (what was
 * expected, what came) or null; `call` throws it.
 */

export type ShapeCheck = (body: unknown) => string | null;

export function kindOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value === '' ? 'nothing' : 'text';
  return `a ${typeof value}`;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const isId = (value: unknown): boolean =>
  (typeof value === 'string' && value !== '') || (typeof value === 'number' && Number.isFinite(value));

/** An object whose `fields` are non-empty strings or numbers and whose `objects` are objects. */
export function objectProblem(body: unknown, fields: string[] = [], objects: string[] = []): string | null {
  if (!isObject(body)) return `expected an object, got ${kindOf(body)}`;
  const missing = fields.find((field) => !isId(body[field])) ?? objects.find((field) => !isObject(body[field]));
  return missing === undefined ? null : `expected an object with '${missing}', got one without it`;
}

/** A list of objects with `fields` (records: `id`; events: `id` and `type`). */
export function listProblem(list: unknown, fields: string[]): string | null {
  if (!Array.isArray(list)) return `expected a list, got ${kindOf(list)}`;
  for (const [at, entry] of list.entries()) {
    const problem = objectProblem(entry, fields);
    if (problem) return `entry ${at + 1} of the list: ${problem}`;
  }
  return null;
}

/** Dropdown choices as the option endpoints give them: `[label, value]` pairs. */
export function pairsProblem(list: unknown): string | null {
  if (!Array.isArray(list)) return `expected a list, got ${kindOf(list)}`;
  const at = list.findIndex((entry) => !Array.isArray(entry) || entry.length < 2 || typeof entry[0] !== 'string' || !isId(entry[1]));
  return at < 0 ? null : `entry ${at + 1} of the list: expected a [label, value] pair, got ${kindOf(list[at])}`;
}

/** A record list in `items` of an object answer, or the answer itself when `items` is absent. */
export function recordsProblem(body: unknown, items: string | null | undefined, single: boolean): string | null {
  if (!items) return single ? objectProblem(body, ['id']) : listProblem(body, ['id']);
  const problem = objectProblem(body);
  if (problem) return problem;
  const listed = listProblem((body as Record<string, unknown>)[items], ['id']);
  return listed ? `field '${items}': ${listed}` : null;
}
