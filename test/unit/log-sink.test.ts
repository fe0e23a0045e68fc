import { describe, expect, test } from '@jest/globals';
import { PassThrough, Writable } from 'node:stream';
import { LogSink } from '../../src/log-sink.js';
import { createLogger, prettyLine } from '../../src/logger.js';

/** A stream nobody reads: like a pipe whose reader is stopped. */
function stalled(): PassThrough {
  return new PassThrough();
}

const line = (n: number) => `${JSON.stringify({ level: 30, time: 1, n, msg: 'request' })}\n`;

describe('LogSink: bounded, never blocking', () => {
  test('a stream that is not read holds at most maxBufferedBytes; the rest is dropped and counted', () => {
    const stream = stalled();
    const sink = new LogSink({ stream, maxBufferedBytes: 64 * 1024 });
    for (let i = 0; i < 10_000; i++) sink.write(line(i));
    expect(stream.writableLength).toBeLessThanOrEqual(64 * 1024);
    expect(sink.dropped).toBeGreaterThan(8_000);
  });

  test('once the reader has caught up, one warning says how many lines were lost, then lines flow', async () => {
    const stream = stalled();
    const sink = new LogSink({ stream, maxBufferedBytes: 4 * 1024 });
    for (let i = 0; i < 1_000; i++) sink.write(line(i));
    const dropped = sink.dropped;
    expect(dropped).toBeGreaterThan(0);
    const received: string[] = [];
    stream.on('data', (chunk: Buffer) => received.push(...chunk.toString().split('\n').filter(Boolean)));
    await new Promise((resolve) => setImmediate(resolve));
    sink.write(line(1_000));
    await new Promise((resolve) => setImmediate(resolve));
    const entries = received.map((text) => JSON.parse(text) as { n?: number; dropped?: number; level: number });
    expect(entries.filter((e) => e.dropped !== undefined)).toEqual([expect.objectContaining({ level: 40, dropped })]);
    // Written + dropped = everything logged: nothing vanished uncounted.
    expect(entries.filter((e) => e.n !== undefined)).toHaveLength(1_001 - dropped);
    expect(entries.at(-1)).toMatchObject({ n: 1_000 });
  });

  test('after a stream error (a vanished reader) lines are dropped quietly, never thrown', () => {
    const stream = new PassThrough();
    const sink = new LogSink({ stream });
    stream.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(() => sink.write(line(1))).not.toThrow();
    expect(sink.dropped).toBe(1);
  });

  test('any number of sinks on one stream add one error listener: no listener leak on stdout', () => {
    // Every jest test file loads its own copy of the logger module, and each copy makes a sink on
    // the same process.stdout; a listener per sink piled up past EventEmitter's limit of 10.
    const stream = new PassThrough();
    const sinks = Array.from({ length: 25 }, () => new LogSink({ stream }));
    expect(stream.listenerCount('error')).toBe(1);
    stream.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    for (const sink of sinks) expect(() => sink.write(line(1))).not.toThrow();
    expect(sinks.map((sink) => sink.dropped)).toEqual(sinks.map(() => 1));
  });

  test('drain waits at most its timeout for a reader that never reads', async () => {
    const stream = stalled();
    const sink = new LogSink({ stream });
    for (let i = 0; i < 2_000; i++) sink.write(line(i));
    const started = Date.now();
    await sink.drain(200);
    // The reader never reads, so only the timeout ends the wait; generous for a busy machine.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(stream.writableLength).toBeGreaterThan(0);
  });
});

describe('LogSink: coalesce', () => {
  /** A stream that records each write it gets: one entry per system call a socket or pipe would make. */
  function recording(): { stream: Writable; writes: string[][] } {
    const writes: string[][] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        writes.push([chunk.toString()]);
        done();
      },
      writev(chunks, done) {
        writes.push(chunks.map((c) => String(c.chunk)));
        done();
      },
    });
    return { stream, writes };
  }

  test('the lines of one turn of the event loop are one write, in order; the next turn starts another', async () => {
    const { stream, writes } = recording();
    const sink = new LogSink({ stream, coalesce: true });
    for (let i = 0; i < 10; i++) sink.write(line(i));
    expect(writes).toHaveLength(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual([Array.from({ length: 10 }, (_, i) => line(i))]);
    sink.write(line(10));
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toHaveLength(2);
    expect(writes[1]).toEqual([line(10)]);
  });

  test('without coalesce every line is written at once', () => {
    const { stream, writes } = recording();
    const sink = new LogSink({ stream });
    for (let i = 0; i < 3; i++) sink.write(line(i));
    expect(writes).toHaveLength(3);
  });

  test('corked lines still count against the bound, and drain waits for them', async () => {
    const { stream, writes } = recording();
    const sink = new LogSink({ stream, coalesce: true, maxBufferedBytes: 1024 });
    for (let i = 0; i < 100; i++) sink.write(line(i));
    expect(sink.dropped).toBeGreaterThan(50);
    await sink.drain(1000);
    expect(writes.flat()).toHaveLength(100 - sink.dropped);
  });
});

describe('LOG_FORMAT', () => {
  test('json: one JSON object a line, keys redacted', () => {
    const stream = new PassThrough();
    const logger = createLogger('info', new LogSink({ stream }));
    logger.info({ route: '/devices/:id', status: 200, key: 'sk_live_secret_0123456789' }, 'request');
    const text = String(stream.read());
    expect(text.endsWith('\n')).toBe(true);
    expect(JSON.parse(text)).toMatchObject({ msg: 'request', route: '/devices/:id', status: 200, key: '[redacted]' });
  });

  test('pretty: one readable line per entry with its fields, keys still redacted', () => {
    const stream = new PassThrough();
    const logger = createLogger('info', new LogSink({ stream, format: prettyLine(false) }));
    logger.info({ route: '/devices/:id', status: 200, key: 'sk_live_secret_0123456789', nested: { apiKey: 'sk_x_0123456789abcdef' } }, 'request');
    logger.warn({ area: 'device' }, 'upstream attempt failed');
    const text = String(stream.read());
    const lines = text.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\] INFO: request .*"route":"\/devices\/:id"/);
    expect(lines[1]).toMatch(/WARN: upstream attempt failed .*"area":"device"/);
    expect(text).not.toContain('sk_');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain('\u001b['); // no colour codes unless stdout is a terminal
  });
});
