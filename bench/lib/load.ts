import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { cpuMicros } from './child.js';
import { percentiles, Samples } from './stats.js';

/**
 * A closed-loop load generator: `concurrency` keep-alive connections, each with one request
 * in flight at a time, for `durationMs`; every completed request is timed. Loopback only.
 *
 * Two clients: `http` (node:http with a keep-alive Agent) and `raw` (a net socket per
 * connection writing one pre-built request and reading just the status line, the
 * Content-Length and that many body bytes). On a 2-core machine the client competes for CPU
 * with the server, so the cheaper client disturbs the comparison less.
 */
export interface LoadOptions {
  url: string;
  headers?: Record<string, string>;
  concurrency: number;
  durationMs: number;
  /** Expected body length: a response of another length counts as an error. */
  expectBytes?: number;
  client: 'http' | 'raw';
}

export interface LoadResult {
  requests: number;
  errors: number;
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU used by this (the client) process, as a share of one core. */
  clientCpu: number;
  firstError?: string;
}

const stragglerGraceMs = 10_000;

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies = new Samples();
  let errors = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    errors += 1;
    firstError ??= message;
  };
  const cpu0 = cpuMicros();
  const start = performance.now();
  const deadline = start + options.durationMs;
  const worker = options.client === 'raw' ? rawWorker : httpWorker;
  const sockets = new Set<Socket>();
  const shared: Shared = { options, deadline, latencies, fail, sockets };
  const agent = options.client === 'http' ? new Agent({ keepAlive: true, maxSockets: options.concurrency, maxFreeSockets: options.concurrency }) : undefined;
  // Bounded: a response still missing this long after the deadline is an error, and its
  // connection is destroyed so the worker ends.
  const hardStop = setTimeout(() => {
    for (const socket of sockets) socket.destroy(new Error(`no response ${stragglerGraceMs} ms after the deadline`));
    agent?.destroy();
  }, options.durationMs + stragglerGraceMs);
  try {
    await Promise.all(Array.from({ length: options.concurrency }, () => worker(shared, agent)));
  } finally {
    clearTimeout(hardStop);
    agent?.destroy();
  }
  const elapsedMs = performance.now() - start;
  const cpu = (cpuMicros() - cpu0) / 1000 / elapsedMs;
  const [p50, p99] = percentiles(latencies.view(), [50, 99]);
  return {
    requests: latencies.length,
    errors,
    elapsedMs,
    rps: (latencies.length * 1000) / elapsedMs,
    p50: p50!,
    p99: p99!,
    clientCpu: cpu,
    firstError,
  };
}

interface Shared {
  options: LoadOptions;
  deadline: number;
  latencies: Samples;
  fail(message: string): void;
  /** Raw client connections, for the hard stop (the http client's live in its Agent). */
  sockets: Set<Socket>;
}

async function httpWorker(shared: Shared, agent?: Agent): Promise<void> {
  const url = new URL(shared.options.url);
  const target = { agent, host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers: shared.options.headers };
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(target, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) shared.fail(`status ${res.statusCode}`);
          else if (shared.options.expectBytes !== undefined && bytes !== shared.options.expectBytes) shared.fail(`body of ${bytes} bytes`);
          else shared.latencies.push(performance.now() - started);
          resolve();
        });
      });
      req.on('error', (err) => {
        shared.fail(err.message);
        resolve();
      });
      req.end();
    });
  while (performance.now() < shared.deadline) await once();
}

/** One keep-alive connection speaking just enough HTTP/1.1 for Content-Length responses. */
function rawWorker(shared: Shared): Promise<void> {
  const url = new URL(shared.options.url);
  const headerLines = Object.entries(shared.options.headers ?? {})
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  const requestBytes = Buffer.from(`GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n${headerLines}\r\n`, 'latin1');
  return new Promise<void>((resolve) => {
    const socket: Socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    shared.sockets.add(socket);
    let started = 0;
    let buffered: Buffer | null = null;
    let bodyLeft = -1; // -1: still reading the head
    let status = 0;
    let bodyLength = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      shared.sockets.delete(socket);
      socket.destroy();
      resolve();
    };
    const send = () => {
      if (performance.now() >= shared.deadline) return finish();
      started = performance.now();
      socket.write(requestBytes);
    };
    const completed = () => {
      if (status !== 200) shared.fail(`status ${status}`);
      else if (shared.options.expectBytes !== undefined && bodyLength !== shared.options.expectBytes) shared.fail(`body of ${bodyLength} bytes`);
      else shared.latencies.push(performance.now() - started);
      bodyLeft = -1;
      send();
    };
    socket.on('connect', send);
    socket.on('data', (chunk: Buffer) => {
      let data = buffered ? Buffer.concat([buffered, chunk]) : chunk;
      buffered = null;
      if (bodyLeft < 0) {
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) {
          buffered = data;
          return;
        }
        const head = data.toString('latin1', 0, end);
        status = Number(head.slice(9, 12));
        const m = /\r\ncontent-length: *(\d+)/i.exec(head);
        if (!m) {
          shared.fail('response without Content-Length');
          return finish();
        }
        bodyLength = Number(m[1]);
        bodyLeft = bodyLength;
        data = data.subarray(end + 4);
      }
      const take = Math.min(bodyLeft, data.length);
      bodyLeft -= take;
      if (bodyLeft > 0) return;
      // One request in flight per connection: nothing may follow the body.
      if (data.length > take) {
        shared.fail('unexpected bytes after a response');
        return finish();
      }
      completed();
    });
    socket.on('error', (err) => {
      shared.fail(err.message);
      finish();
    });
    socket.on('close', finish);
  });
}
