import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, type ManualClock, type TestApp } from './app.js';

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, unknown>;
  authorization?: string;
  apiKey?: string;
  requestId?: string;
  forwardedFor?: string;
  at: number;
}

/** What the next matching call gets instead of the real answer. */
export interface Fault {
  /** Only calls whose path starts with this are affected (default: all). */
  pathPrefix?: string;
  /** Only calls asking for this page (`?page=`) are affected (default: any). */
  page?: string;
  status?: number;
  /** A JSON body (or a raw string) to send with `status`. */
  body?: unknown;
  /** A JSON body made from the call's query, sent with `status` (default 200): a generated listing. */
  answer?: (query: Record<string, unknown>) => unknown;
  headers?: Record<string, string>;
  /** Wait before answering (the real answer, or the fault's). */
  delayMs?: number;
  /** Never answer. */
  hang?: boolean;
}

/**
 * A real HTTP upstream on 127.0.0.1:0 that serves the device and menu interface (docs/upstream.md): it is the
 * connector's own embedded mode on its own in-memory database — and records every call.
 * Faults are queued (`failNext`) or permanent (`failAlways`) and injected before routing.
 */
export class FakeUpstream {
  readonly calls: RecordedCall[] = [];
  private readonly queued: Fault[] = [];
  private permanent: Fault | null = null;
  private server!: Server;
  inner!: TestApp;
  baseUrl = '';
  /** Added to every answer, e.g. to make a cold burst observable. */
  latencyMs = 0;
  /**
   * Applied to every device the real answers of `/devices` carry (in a page or alone), e.g. to
   * make one device's record invalid while the rest stays as the catalog says. Returning null
   * leaves the device out of a page (its `total` unchanged), as an upstream that loses a record would.
   */
  rewriteDevice: ((device: Record<string, unknown>) => Record<string, unknown> | null) | null = null;

  constructor(
    private readonly dataset: unknown,
    private readonly clock?: ManualClock,
  ) {}

  async start(): Promise<this> {
    this.inner = await buildTestApp({ dataset: this.dataset, clock: this.clock });
    const app = express();
    app.use(async (req, res, next) => {
      this.calls.push({
        method: req.method,
        path: req.path,
        query: { ...req.query },
        authorization: req.headers.authorization,
        apiKey: req.headers['x-api-key'] as string | undefined,
        requestId: req.headers['x-request-id'] as string | undefined,
        forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
        at: Date.now(),
      });
      const fault = this.takeFault(req.path, typeof req.query.page === 'string' ? req.query.page : undefined);
      const delay = (fault?.delayMs ?? 0) + this.latencyMs;
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      if (fault?.hang) return; // the socket stays open until the client gives up
      if (fault?.answer) {
        res
          .status(fault.status ?? 200)
          .set(fault.headers ?? {})
          .json(fault.answer({ ...req.query }));
        return;
      }
      if (fault?.status !== undefined) {
        res.status(fault.status).set(fault.headers ?? {});
        if (typeof fault.body === 'string') res.type('application/json').send(fault.body);
        else res.json(fault.body ?? { message: `fault ${fault.status}` });
        return;
      }
      if (req.path.startsWith('/devices')) this.rewriteDevices(res);
      next();
    });
    app.use(this.inner.app);
    this.server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => this.server.once('listening', () => resolve()));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  failNext(...faults: Fault[]): void {
    this.queued.push(...faults);
  }

  failAlways(fault: Fault | null): void {
    this.permanent = fault;
  }

  callsTo(pathPrefix: string): RecordedCall[] {
    return this.calls.filter((c) => c.path.startsWith(pathPrefix));
  }

  reset(): void {
    this.calls.length = 0;
    this.queued.length = 0;
    this.permanent = null;
    this.latencyMs = 0;
    this.rewriteDevice = null;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.inner.close();
  }

  private rewriteDevices(res: express.Response): void {
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const rewrite = this.rewriteDevice;
      if (!rewrite || res.statusCode !== 200 || body === null || typeof body !== 'object') return send(body);
      const page = body as { data?: unknown };
      if (Array.isArray(page.data)) return send({ ...page, data: page.data.map((d: Record<string, unknown>) => rewrite(d)).filter((d) => d !== null) });
      return send(rewrite(body as Record<string, unknown>));
    };
  }

  private takeFault(path: string, page: string | undefined): Fault | null {
    const matches = (f: Fault) => (!f.pathPrefix || path.startsWith(f.pathPrefix)) && (f.page === undefined || f.page === page);
    const index = this.queued.findIndex(matches);
    if (index >= 0) return this.queued.splice(index, 1)[0]!;
    if (this.permanent && matches(this.permanent)) return this.permanent;
    return null;
  }
}
