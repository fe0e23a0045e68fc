import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { CliProcess, ensureBuild } from '../helpers/processes.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * `npm run receiver` (dist/src/cli/receiver.js), as the README's webhook example uses it: it
 * explains itself with --help, and against a connector started with
 * WEBHOOK_ALLOWED_TARGETS=http://127.0.0.1:<port> (no DNS, no private targets in general) it
 * subscribes itself and unsubscribes on Ctrl+C.
 */

const receiverJs = join(projectRoot, 'dist', 'src', 'cli', 'receiver.js');
let t: TestApp | undefined;
let server: Server | undefined;

beforeAll(async () => {
  await ensureBuild();
}, 180_000);

afterEach(async () => {
  CliProcess.killAll();
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await t?.close();
  t = undefined;
});

afterAll(() => CliProcess.killAll());

/** A port free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('npm run receiver', () => {
  test('--help prints the usage, naming how the connector must allow it, and exits 0', async () => {
    const cli = new CliProcess(receiverJs, ['--help'], {});
    expect(await cli.exited).toEqual({ code: 0, signal: null });
    expect(cli.stdout).toContain('Usage:');
    expect(cli.stdout).toContain('npm run receiver -- --key <api key>');
    expect(cli.stdout).toContain('WEBHOOK_ALLOWED_TARGETS=http://127.0.0.1:4000');
    expect(cli.stderr).toBe('');
  }, 30_000);

  test('subscribes itself at 127.0.0.1 on a connector that allows only that origin, and unsubscribes on Ctrl+C', async () => {
    const port = await freePort();
    t = await buildTestApp({ dataset: catalog(), env: { WEBHOOK_ALLOWED_TARGETS: `http://127.0.0.1:${port}` } });
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const connector = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const cli = new CliProcess(receiverJs, ['--key', keys.ana, '--connector', connector, '--port', String(port)], {});
    await cli.waitForOutput('Subscribed as', 30_000);
    const hooks = (await request(t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200)).body as Array<{ target_url: string }>;
    expect(hooks.map((h) => h.target_url)).toEqual([`http://127.0.0.1:${port}/hook`]);
    cli.child.kill('SIGINT');
    await cli.exited;
    expect(cli.stdout).toContain('Unsubscribed');
    await request(t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200, []);
  }, 60_000);
});
