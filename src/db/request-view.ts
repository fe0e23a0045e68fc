import type { Db } from './database.js';
import type { RequestWaits } from './wait-budget.js';

/**
 * `store` as one request uses it: the same object, its state shared, but reading its `db` (and
 * any of `fields`) as the request's view, so its waits share the request's deadline
 * (wait-budget.ts). Outside a request (no waits), `store` itself. Only for stores that set no
 * field after they are built: a field set through the view would stay on the view.
 */
export function requestView<T extends object>(store: T, db: Db, waits: RequestWaits | undefined, fields: Record<string, unknown> = {}): T {
  if (!waits) return store;
  const shadowed: PropertyDescriptorMap = { db: { value: db.within(waits) } };
  for (const [name, value] of Object.entries(fields)) shadowed[name] = { value };
  return Object.create(store, shadowed) as T;
}
