import type { Server } from 'node:http';
import { verify } from '../../src/webhooks/signing.js';
import { closeServer, listenLoopback } from './stack.js';

/**
 * A webhook receiver on 127.0.0.1:0 for the bench: a bare node:http server that answers 204 as
 * soon as the body is in and records the arrival (wall clock, for delays against timestamps
 * the connector wrote, and performance.now(), for rates), the Standard Webhooks headers and
 * the raw body. Signatures are checked afterwards (`check`), so verifying costs nothing while
 * deliveries are measured.
 */
export interface Arrival {
  /** Date.now() when the whole body had arrived. */
  at: number;
  /** performance.now() at the same moment. */
  t: number;
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

export interface CheckResult {
  count: number;
  unique: number;
  duplicates: number;
  badSignatures: number;
  /** Event ids (data.id) of the deliveries, in arrival order. */
  eventIds: string[];
}

export class BenchReceiver {
  readonly arrivals: Arrival[] = [];
  private server: Server | null = null;
  url = '';
  private waiters: Array<{ count: number; resolve(): void }> = [];

  /** `answerAfterMs`: hold each answer this long (a slower, remote-like receiver); arrival is still taken when the body is in. */
  async start(path = '/hook', answerAfterMs = 0): Promise<this> {
    const { server, url } = await listenLoopback((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const t = performance.now();
        this.arrivals.push({
          at: Date.now(),
          t,
          id: String(req.headers['webhook-id'] ?? ''),
          timestamp: String(req.headers['webhook-timestamp'] ?? ''),
          signature: String(req.headers['webhook-signature'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        const status = req.method === 'POST' && req.url === path ? 204 : 404;
        if (answerAfterMs > 0) setTimeout(() => res.writeHead(status).end(), answerAfterMs);
        else res.writeHead(status).end();
        this.notify();
      });
    });
    this.server = server;
    this.url = `${url}${path}`;
    return this;
  }

  /** Resolves once `count` deliveries have arrived in all; false if `timeoutMs` passes first. */
  waitFor(count: number, timeoutMs: number): Promise<boolean> {
    if (this.arrivals.length >= count) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
  }

  private notify(): void {
    const n = this.arrivals.length;
    const ready = this.waiters.filter((w) => n >= w.count);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => n < w.count);
    for (const w of ready) w.resolve();
  }

  /** Verifies every arrival (signature with `secret`, timestamp within 5 min of arrival) and counts duplicate webhook-ids. */
  check(secret: string, from = 0): CheckResult {
    const slice = this.arrivals.slice(from);
    const ids = new Set<string>();
    let badSignatures = 0;
    const eventIds: string[] = [];
    for (const a of slice) {
      ids.add(a.id);
      const ok = verify(secret, { 'webhook-id': a.id, 'webhook-timestamp': a.timestamp, 'webhook-signature': a.signature }, a.body, Math.floor(a.at / 1000));
      if (!ok) badSignatures += 1;
      try {
        eventIds.push(String((JSON.parse(a.body) as { data: { id: string } }).data.id));
      } catch {
        badSignatures += 1;
      }
    }
    return { count: slice.length, unique: ids.size, duplicates: slice.length - ids.size, badSignatures, eventIds };
  }

  async stop(): Promise<void> {
    if (this.server) await closeServer(this.server);
    this.server = null;
  }
}
