// Stops the embedded PostgreSQL that global-setup.mjs started (if it did) and removes its data.
import { rmSync } from 'node:fs';
import { handleKey } from './global-setup.mjs';

export default async function globalTeardown() {
  const handle = globalThis[handleKey];
  if (!handle) return;
  delete globalThis[handleKey];
  await handle.server.stop();
  delete process.env.TEST_DATABASE_URL;
  delete process.env.TEST_EMBEDDED_POSTGRES_PID;
  rmSync(handle.dir, { recursive: true, force: true });
}
