import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1:0 that records every delivery (raw body and headers) and
 * answers what the test queues (`respondWith`), 204 by default.
 */
export class Receiver {
  readonly received: Received[] = [];
  private readonly answers: Array<{ status: number; headers?: Record<string, string>; delayMs?: number }> = [];
  private server!: Server;
  url = '';

  async start(path = '/hook'): Promise<this> {
    const app = express();
    app.post(path, express.text({ type: '*/*' }), async (req, res) => {
      this.received.push({ headers: req.headers as Record<string, string>, body: req.body as string, at: Date.now() });
      const answer = this.answers.shift() ?? { status: 204 };
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      res
        .status(answer.status)
        .set(answer.headers ?? {})
        .end();
    });
    this.server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => this.server.once('listening', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
    return this;
  }

  respondWith(...answers: Array<{ status: number; headers?: Record<string, string>; delayMs?: number }>): void {
    this.answers.push(...answers);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
