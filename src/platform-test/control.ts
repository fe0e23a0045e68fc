import { createServer, type Server } from 'node:http';
import { openDatabase, type Db } from '../db/database.js';
import { formatMicros } from '../time/timestamps.js';
import { heartbeatTimeoutMs } from './connector.js';

/**
 * The test control of `npm run test:platforms`: a loopback HTTP server that makes a device of
 * the live connector go offline or come back, by moving its last heartbeat in the connector's
 * database (as a real heartbeat would). An app's tests find it at `CONNECTOR_CONTROL_URL`:
 *
 *   POST /devices/{id}/offline   last heartbeat two timeouts ago: offline at the next poll
 *   POST /devices/{id}/online    last heartbeat now: online at the next poll
 *
 * Both answer 204, or 404 when no such device exists. The poller notices within about a second.
 */
export interface Control {
  url: string;
  stop(): Promise<void>;
}

export async function startControl(databasePath: string): Promise<Control> {
  const db: Db = await openDatabase({ path: databasePath, poolSize: 1 });
  const server: Server = createServer((req, res) => {
    const match = /^\/devices\/([^/]+)\/(offline|online)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found"}');
      return;
    }
    const id = decodeURIComponent(match[1]!).toLowerCase();
    const at = match[2] === 'online' ? Date.now() : Date.now() - 2 * heartbeatTimeoutMs;
    const stamp = formatMicros(at * 1000);
    db.kysely
      .updateTable('devices')
      .set({ last_heartbeat_at: stamp, updated_at: formatMicros(Date.now() * 1000) })
      .where('id', '=', id)
      .executeTakeFirst()
      .then((result) => {
        const found = Number(result.numUpdatedRows) > 0;
        res.writeHead(found ? 204 : 404, found ? {} : { 'content-type': 'application/json' }).end(found ? undefined : '{"message":"Device not found"}');
      })
      .catch((err: unknown) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ message: (err as Error).message })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.close();
    },
  };
}
