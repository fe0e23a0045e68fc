/**
 * The shape of what the connector answers, checked before a node uses it: a proxy or a broken
 * deployment in front of the connector can answer 200 with HTML, with an object where a list
 * belongs, or with records without an id, and a workflow must then stop with a clear error,
 * never go on with no items or a bad one. Each check returns a problem (what was expected, what
 * came) or null; the caller throws it as a NodeApiError.
 */

export type ShapeCheck = (body: unknown) => string | null;

/** How long a request may wait for the connector's answer. */
export const timeoutMs = 30_000;

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
	(typeof value === 'string' && value !== '') ||
	(typeof value === 'number' && Number.isFinite(value));

/** Text where JSON belongs: n8n keeps a body it cannot parse as text. */
export function jsonProblem(body: unknown): string | null {
	return typeof body === 'string' && body.trim() !== ''
		? "the answer is not valid JSON; is the base URL the connector's?"
		: null;
}

/** An object whose `fields` are non-empty strings or numbers and whose `objects` are objects. */
export function objectProblem(
	body: unknown,
	fields: string[] = [],
	objects: string[] = [],
): string | null {
	const json = jsonProblem(body);
	if (json) return json;
	if (!isObject(body)) return `expected an object, got ${kindOf(body)}`;
	const missing =
		fields.find((field) => !isId(body[field])) ?? objects.find((field) => !isObject(body[field]));
	return missing === undefined ? null : `expected an object with '${missing}', got one without it`;
}

/** A list of objects with `fields` (records: `id`; events: `id` and `type`; choices: `value`). */
export function listProblem(list: unknown, fields: string[]): string | null {
	const json = jsonProblem(list);
	if (json) return json;
	if (!Array.isArray(list)) return `expected a list, got ${kindOf(list)}`;
	for (const [at, entry] of list.entries()) {
		const problem = objectProblem(entry, fields);
		if (problem) return `entry ${at + 1} of the list: ${problem}`;
	}
	return null;
}

/** Records with an id in `items` of an object answer, or the answer itself without `items`. */
export function recordsProblem(
	body: unknown,
	items: string | undefined,
	single: boolean,
): string | null {
	if (!items) return single ? objectProblem(body, ['id']) : listProblem(body, ['id']);
	const problem = objectProblem(body);
	if (problem) return problem;
	const listed = listProblem((body as Record<string, unknown>)[items], ['id']);
	return listed ? `field '${items}': ${listed}` : null;
}
