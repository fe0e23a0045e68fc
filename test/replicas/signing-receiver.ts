import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One delivery as the receiver saw it. */
export interface Arrival {
  key: number;
  webhookId: string;
  eventId: string;
  type: string;
  deviceId: string;
  heartbeat: string | null;
  signatureOk: boolean;
  status: number;
  at: number;
}

/**
 * Webhook targets for many keys on one server on 127.0.0.1:0 (`/hook/<key index>`). Every
 * delivery's Standard Webhooks signature is checked with the `standardwebhooks` package against
 * the secret of that key's hook (a bad one gets 400). `flaky`: about one delivery attempt in ten
 * gets a 500 (at most two per webhook-id, so the retry schedule always gets through); `mode`
 * can switch every answer to 503 or back.
 */
export class SigningReceiver {
  readonly arrivals: Arrival[] = [];
  readonly secrets = new Map<number, string>();
  mode: 'ok' | 'flaky' | 'unavailable' = 'flaky';
  url = '';
  private readonly failuresGiven = new Map<string, number>();
  private server: Server | null = null;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.writeHead(this.receive(req.url ?? '', req.headers, Buffer.concat(chunks).toString('utf8'))).end());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  target(key: number): string {
    return `${this.url}/hook/${key}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** webhook-id → its arrivals, in order. */
  byWebhookId(): Map<string, Arrival[]> {
    const map = new Map<string, Arrival[]>();
    for (const a of this.arrivals) map.set(a.webhookId, [...(map.get(a.webhookId) ?? []), a]);
    return map;
  }

  private receive(path: string, headers: Record<string, string | string[] | undefined>, body: string): number {
    const key = Number(/^\/hook\/(\d+)$/.exec(path)?.[1] ?? -1);
    const webhookId = String(headers['webhook-id'] ?? '');
    let signatureOk = false;
    const secret = this.secrets.get(key);
    try {
      if (secret) {
        new Webhook(secret).verify(body, {
          'webhook-id': webhookId,
          'webhook-timestamp': String(headers['webhook-timestamp'] ?? ''),
          'webhook-signature': String(headers['webhook-signature'] ?? ''),
        });
        signatureOk = true;
      }
    } catch {
      signatureOk = false;
    }
    let event: { id?: string; type?: string; device?: { id?: string; last_heartbeat_at?: string | null } } = {};
    try {
      event = (JSON.parse(body) as { data?: typeof event }).data ?? {};
    } catch {
      // recorded with empty fields; the test fails on it
    }
    const status = signatureOk ? this.answer(webhookId) : 400;
    this.arrivals.push({
      key,
      webhookId,
      eventId: String(event.id ?? ''),
      type: String(event.type ?? ''),
      deviceId: String(event.device?.id ?? '').toLowerCase(),
      heartbeat: event.device?.last_heartbeat_at ?? null,
      signatureOk,
      status,
      at: Date.now(),
    });
    return status;
  }

  private answer(webhookId: string): number {
    if (this.mode === 'unavailable') return 503;
    if (this.mode === 'ok') return 204;
    const given = this.failuresGiven.get(webhookId) ?? 0;
    const roll = createHash('sha256').update(`${webhookId}/${given}`).digest()[0]!;
    if (given < 2 && roll < 26) {
      this.failuresGiven.set(webhookId, given + 1);
      return 500;
    }
    return 204;
  }
}
