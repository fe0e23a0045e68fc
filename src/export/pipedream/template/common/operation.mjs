import {
  fillPath, isEmpty, toList,
} from "./connector.mjs";
import {
  listProblem, objectProblem,
} from "./shape.mjs";

/**
 * Runs an action: its operation (the component's `operation()`, generated from the manifest)
 * with the component's props as inputs. A paged list is read page after page until the limit
 * input is reached or the list ends; a single record is picked from its array, and an empty
 * array is the operation's "not found" error.
 */

/** The query an operation's inputs make (lists joined by commas), without the paging input. */
export function operationQuery(operation, values) {
  const query = { ...operation.request.query };
  for (const input of operation.inputs) {
    if (input.in !== "query") continue;
    const value = input.list ? toList(values[input.key]).join(",") : values[input.key];
    if (!isEmpty(value)) query[input.param ?? input.key] = String(value);
  }
  return query;
}

function limitOf(operation, values) {
  const input = operation.inputs.find((candidate) => candidate.key === operation.paging.limitInput);
  const raw = values[operation.paging.limitInput];
  const limit = Number(isEmpty(raw) ? input?.default : raw);
  return Number.isInteger(limit) && limit > 0 ? limit : operation.paging.maxSize;
}

/**
 * What is wrong with an operation's answer: a record list (in `result.items`, or the body)
 * must hold objects with an id, a single record must be an object with an id.
 */
function recordsProblem(operation, body) {
  const items = operation.result.items;
  if (!items) return operation.result.single
    ? objectProblem(body, [
      "id",
    ])
    : listProblem(body, [
      "id",
    ]);
  const problem = objectProblem(body);
  if (problem) return problem;
  const listed = listProblem(body[items], [
    "id",
  ]);
  return listed
    ? `field '${items}': ${listed}`
    : null;
}

async function readPages(app, $, operation, path, query, values) {
  const { paging } = operation;
  const limit = limitOf(operation, values);
  const size = Math.min(limit, paging.maxSize);
  const records = [];
  for (let page = 1; records.length < limit; page += 1) {
    const body = await app._request({
      $,
      path,
      params: { ...query, [paging.page]: page, [paging.size]: size },
      auth: operation.request.auth,
      check: (answer) => recordsProblem(operation, answer),
    });
    const batch = operation.result.items
      ? body[operation.result.items]
      : body;
    records.push(...batch);
    const total = Number(body?.[paging.total]);
    if (batch.length < size || (Number.isFinite(total) && page * size >= total)) break;
  }
  return records.slice(0, limit);
}

function summary(operation, result) {
  if (!Array.isArray(result)) return `Found ${operation.noun.toLowerCase()} ${result?.name ?? result?.id ?? ""}`.trim();
  return `Found ${result.length} ${operation.noun.toLowerCase()} record${result.length === 1 ? "" : "s"}`;
}

/**
 * The action's result: a record or a list of records, as the connector returned them. `app` is
 * the component's app prop, `component` the component (its props are the inputs).
 */
export async function runOperation(app, component, $) {
  const operation = component.operation();
  const path = fillPath(operation.request.path, component);
  const query = operationQuery(operation, component);
  let result;
  if (operation.paging) {
    result = await readPages(app, $, operation, path, query, component);
  } else {
    const body = await app._request({
      $,
      method: operation.request.method,
      path,
      params: query,
      auth: operation.request.auth,
      check: (answer) => recordsProblem(operation, answer),
    });
    result = operation.result.items ? body?.[operation.result.items] : body;
  }
  if (operation.result.single && Array.isArray(result)) {
    if (result.length === 0) throw new Error(operation.result.notFound ?? `${operation.noun} not found`);
    result = result[0];
  }
  $?.export?.("$summary", summary(operation, result));
  return result;
}
