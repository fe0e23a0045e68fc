import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** True when nothing listens on `port` at `host` (we could bind it just now). */
export function portFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * The ports below the system's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range,
 * 32768–60999 by default), from 20000: a port there is never handed to an outgoing connection
 * or to a listener on port 0, so one found free stays free unless someone asks for it by number.
 */
function ownRange(): { low: number; high: number } {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // not Linux: keep the usual default
  }
  return ephemeralLow > 21000 ? { low: 20000, high: ephemeralLow - 1 } : { low: 10000, high: 19999 };
}

/**
 * The first of `count` consecutive ports that are free now (for replicas on consecutive ports
 * in tests and the bench), picked at random below the ephemeral range: the outgoing connections
 * of everything else running (other test files, the database's clients) cannot take one of
 * them between this check and the replicas binding them, as they did when the range came from
 * the system's ephemeral ports.
 */
export async function freePortRange(count: number, host = '127.0.0.1'): Promise<number> {
  const { low, high } = ownRange();
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const first = low + Math.floor(Math.random() * (high - low - count + 2));
    let all = true;
    for (let port = first; port < first + count && all; port += 1) all = await portFree(port, host);
    if (all) return first;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}
