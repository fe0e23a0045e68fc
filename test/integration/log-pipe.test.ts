import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuild, PipedServer } from '../helpers/server-process.js';

/**
 * The real process (`node dist/src/main.js`) with its stdout piped into a real reader that
 * the test stops or kills: logging must neither hold the exit nor hoard memory.
 */

let tmp: string;
let servers: PipedServer[] = [];
let dbCount = 0;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-log-pipe-'));
  await ensureBuild();
}, 180_000);

afterEach(() => {
  for (const s of servers) s.kill();
  servers = [];
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function start(env: Record<string, string> = {}): Promise<PipedServer> {
  dbCount += 1;
  const server = new PipedServer({ LOG_LEVEL: 'trace', DATABASE_PATH: join(tmp, `db-${dbCount}.sqlite`), ...env });
  servers.push(server);
  return server.started();
}

/** A 128-character request id (the longest accepted) makes each access line ~290 bytes. */
const longId = { 'x-request-id': 'r'.repeat(128) };

/**
 * Inside the 10 s grace period of main.ts (a process held up by its log would use it all, or the
 * 15 s forced exit), with room for a busy machine.
 */
const exitBoundMs = 8_000;

describe('a stopped log reader', () => {
  test('SIGTERM still ends the process promptly', async () => {
    const s = await start();
    s.reader.kill('SIGSTOP');
    await s.load('/healthz', 1500, longId);
    const exit = await s.terminate(12_000);
    expect(exit).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.ms).toBeLessThan(exitBoundMs);
  }, 60_000);

  test('at most 512 KiB of lines is held; the rest is dropped, counted and reported once the reader resumes', async () => {
    const s = await start();
    const startup = s.output().length;
    s.reader.kill('SIGSTOP');
    await s.load('/healthz', 3000, longId);
    s.reader.kill('SIGCONT');
    let sent = 3000;
    // The notice rides on the first line written after the backlog has drained.
    while (!s.output().includes('log lines dropped') && sent < 3200) {
      await s.load('/healthz', 1);
      sent += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const text = s.output().slice(startup);
    const noticeAt = text.indexOf('{"level":40,');
    expect(noticeAt).toBeGreaterThan(0);
    // Whole JSON lines only (the demo banner is plain text; the last line may be in transit).
    const whole = text.slice(0, text.lastIndexOf('\n'));
    const lines = whole
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; dropped?: number });
    const notices = lines.filter((l) => l.msg.startsWith('log lines dropped'));
    expect(notices).toHaveLength(1);
    const dropped = notices[0]!.dropped!;
    expect(dropped).toBeGreaterThan(300);
    // Every request line was either written or counted as dropped: none went missing silently.
    expect(lines.filter((l) => l.msg === 'request').length + dropped).toBe(sent);
    // What was written while the reader was stopped: the pipe (64 KiB) plus the 512 KiB bound.
    expect(noticeAt).toBeLessThan(512 * 1024 + 64 * 1024 + 4096);
    const exit = await s.terminate(12_000);
    expect(exit).toMatchObject({ code: 0 });
    // A reader that keeps up gets everything up to the last line.
    await s.waitFor(/"msg":"stopped"/, 2_000);
  }, 60_000);
});

describe('a log reader that dies', () => {
  test('killed while the pipe is full: SIGTERM right after still ends the process promptly', async () => {
    const s = await start();
    s.reader.kill('SIGSTOP');
    await s.load('/healthz', 1500);
    s.reader.kill('SIGKILL');
    const exit = await s.terminate(12_000);
    expect(exit).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.ms).toBeLessThan(exitBoundMs);
  }, 60_000);

  test('killed under load: the process keeps serving, then stops promptly', async () => {
    const s = await start();
    const load = s.load('/healthz', 1500);
    setTimeout(() => s.reader.kill('SIGKILL'), 100);
    await load;
    await s.load('/healthz', 10);
    const exit = await s.terminate(12_000);
    expect(exit).not.toBeNull();
    expect(exit!.code).toBe(0);
    expect(exit!.ms).toBeLessThan(exitBoundMs);
  }, 60_000);
});

describe('LOG_FORMAT in the real process', () => {
  test('pretty: one readable line per request and per event, no JSON lines', async () => {
    const s = await start({ LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' });
    await s.load('/healthz', 2);
    expect(await s.terminate(12_000)).toMatchObject({ code: 0 });
    await s.waitFor(/INFO: stopped/, 2_000);
    const lines = s
      .output()
      .split('\n')
      .filter((line) => line.startsWith('['));
    expect(lines.find((line) => / INFO: listening /.test(line))).toMatch(/"port":\d+/);
    const requests = lines.filter((line) => / INFO: request /.test(line));
    expect(requests).toHaveLength(2);
    expect(requests[0]).toMatch(/"method":"GET","route":"\/healthz","status":200/);
    expect(
      s
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{')),
    ).toEqual([]);
  }, 60_000);

  test.each([['json'], ['auto']])(
    '%s (stdout is a pipe): one JSON object a line',
    async (format) => {
      const s = await start({ LOG_LEVEL: 'info', LOG_FORMAT: format });
      await s.load('/healthz', 2);
      expect(await s.terminate(12_000)).toMatchObject({ code: 0 });
      await s.waitFor(/"msg":"stopped"/, 2_000);
      const entries = s
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string });
      expect(entries.map((e) => e.msg)).toEqual(expect.arrayContaining(['listening', 'request', 'stopped']));
      expect(entries.filter((e) => e.msg === 'request')).toHaveLength(2);
    },
    60_000,
  );
});
