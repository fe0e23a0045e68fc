import { Kysely, type ConnectionProvider, type DatabaseConnection, type Dialect, type Driver } from 'kysely';
import type { Tables } from './tables.js';
import type { RequestWaits } from './wait-budget.js';

/** A driver whose connections can be taken for one request: their waits share its deadline (wait-budget.ts). */
export interface WaitsDriver extends Driver {
  acquireConnection(waits?: RequestWaits): Promise<DatabaseConnection>;
}

/**
 * The dialect's driver, made once and kept, so the request views of one database
 * (`kyselyWithin`) use the same connections as the database itself.
 */
export function keptDriver<D extends WaitsDriver>(dialect: Dialect, driver: D): D {
  dialect.createDriver = () => driver;
  return driver;
}

/**
 * `base` (built on `dialect` and `driver`) for one request: every connection it takes, inside
 * a transaction or not, is taken with the request's waits. A few objects, made only for a
 * request that uses the database.
 */
export function kyselyWithin(base: Kysely<Tables>, dialect: Dialect, driver: WaitsDriver, waits: RequestWaits): Kysely<Tables> {
  const connections: ConnectionProvider = {
    async provideConnection(consumer) {
      const connection = await driver.acquireConnection(waits);
      try {
        return await consumer(connection);
      } finally {
        await driver.releaseConnection(connection);
      }
    },
  };
  return new Kysely<Tables>({ config: { dialect }, dialect, driver, executor: base.getExecutor().withConnectionProvider(connections) });
}
