import { createServer } from 'node:net';

/** True when nothing listens on `port` at `host` (we could bind it just now). */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function systemPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The first of `count` consecutive ports that are free now, starting at one the system hands
 * out (for replicas on consecutive ports in tests and the bench; someone may still take one
 * before it is used: a small race).
 */
export async function freePortRange(count: number, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const first = await systemPort(host);
    if (first + count - 1 > 65535) continue;
    let all = true;
    for (let port = first + 1; port < first + count && all; port += 1) all = await portFree(port, host);
    if (all) return first;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}
