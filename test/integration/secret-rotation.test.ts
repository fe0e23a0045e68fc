import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { hashKey } from '../../src/auth/keys.js';
import { decodeSecret } from '../../src/config.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { checkSealedSecrets, resealSecrets, sealedColumns, unreadableSecretsLine } from '../../src/crypto/sealed-secrets.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { testEngine } from '../helpers/engine.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Rotating CONNECTOR_SECRET (docs/deploy.md): replicas started with the new secret and
 * CONNECTOR_SECRET_PREVIOUS read what either sealed; `resealSecrets` (`npm run rotate-secret`)
 * seals every stored secret anew; afterwards the new secret alone opens everything, so hooks
 * still deliver with the signing secret their receiver knows and stored upstream keys still poll.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const oldSecret = 'a1'.repeat(32);
const newSecret = 'b2'.repeat(32);
const strangerSecret = 'c3'.repeat(32);
const frontCounter = 'a4:83:e7:1f:2b:01';
const fiveMinutes = 5 * 60_000;

const box = (secret: string, previous?: string) => new SecretBox(decodeSecret(secret)!, previous ? decodeSecret(previous)! : undefined);

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** A connector whose clock reads the upstream's (a heartbeat ahead of the poll's time is taken as that time). */
async function connector(upstream: FakeUpstream, databasePath: string, env: Record<string, string>, upstreamClock?: ManualClock): Promise<TestApp> {
  const t = await buildTestApp({
    clock: new ManualClock(upstreamClock?.now() ?? Date.now()),
    databasePath,
    keep: true,
    env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '2000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...env },
  });
  return t;
}

function verify(receiver: Receiver, index: number, secret: string): Json {
  const delivery = receiver.received[index]!;
  return new Webhook(secret).verify(delivery.body, delivery.headers);
}

describe('rotating CONNECTOR_SECRET', () => {
  test('hooks keep their signing secret and stored upstream keys keep polling through a rotation', async () => {
    // Three minutes in the past: the connectors' clocks follow it through six minutes, and the
    // deliveries' timestamps stay within what a Standard Webhooks receiver accepts (5 minutes).
    const upClock = new ManualClock(Date.now() - 3 * 60_000);
    const upstream = await new FakeUpstream(catalog(), upClock).start();
    const receiver = await new Receiver().start();
    open.push({ close: () => upstream.stop() }, { close: () => receiver.stop() });
    const dir = mkdtempSync(join(tmpdir(), 'connector-rotation-'));
    // Last to go (the list is closed in reverse): the folder goes once the apps on it are closed.
    open.unshift({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const databasePath = join(dir, 'connector.db');

    // Before: one hook (its signing secret sealed) and Ana's watched key (sealed for polling).
    const before = await connector(upstream, databasePath, { CONNECTOR_SECRET: oldSecret }, upClock);
    const hook = (await request(before.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201)).body;
    const sealedBefore = await before.value<string>('SELECT key_cipher FROM watches WHERE key_hash = ?', hashKey(keys.ana));
    expect(sealedBefore).toMatch(/^v1\./);
    await before.close();

    // Every replica restarted with the new secret and the previous one: it reads what the old one sealed.
    const during = await connector(upstream, databasePath, { CONNECTOR_SECRET: newSecret, CONNECTOR_SECRET_PREVIOUS: oldSecret }, upClock);
    expect(await checkSealedSecrets(during.db, box(newSecret))).toMatchObject({
      current: 0,
      unreadable: { 'hooks.secret_cipher': 1, 'watches.key_cipher': 1 },
    });
    expect(await checkSealedSecrets(during.db, box(newSecret, oldSecret))).toMatchObject({ current: 0, previous: 2, unreadable: {} });
    upClock.advance(fiveMinutes);
    during.clock.advance(fiveMinutes);
    expect(await pollDue(during)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect(await during.services.deliverer.drain()).toBe(1);
    expect(verify(receiver, 0, hook.secret)).toMatchObject({ type: 'device.offline', data: { device: { id: frontCounter } } });

    // The rotation: everything re-sealed with the new secret; a second run finds nothing to do.
    expect(await resealSecrets(during.db, box(newSecret, oldSecret))).toEqual({ current: 0, previous: 2, resealed: 2, changedMeanwhile: 0, unreadable: {} });
    expect(await resealSecrets(during.db, box(newSecret, oldSecret))).toEqual({ current: 2, previous: 0, resealed: 0, changedMeanwhile: 0, unreadable: {} });
    const sealedAfter = await during.value<string>('SELECT key_cipher FROM watches WHERE key_hash = ?', hashKey(keys.ana));
    expect(sealedAfter).not.toBe(sealedBefore);
    await during.close();

    // The previous secret dropped: the new one alone opens every stored secret.
    const after = await connector(upstream, databasePath, { CONNECTOR_SECRET: newSecret }, upClock);
    open.push(after);
    expect(await checkSealedSecrets(after.db, box(newSecret))).toEqual({ current: 2, previous: 0, resealed: 0, changedMeanwhile: 0, unreadable: {} });
    upClock.advance(60_000);
    after.clock.advance(60_000);
    const fresh = formatMicros(upClock.now() * 1000);
    await upstream.inner.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', fresh, frontCounter);
    const pollsBefore = upstream.callsTo('/devices').length;
    expect(await pollDue(after)).toEqual({ keys: 1, events: 1, failed: 0 });
    // The poll went upstream with Ana's key, opened with the new secret.
    expect(upstream.callsTo('/devices').slice(pollsBefore)[0]).toMatchObject({ authorization: `Bearer ${keys.ana}` });
    expect(await after.services.deliverer.drain()).toBe(1);
    // Signed with the same hook secret the receiver was given at subscription.
    expect(verify(receiver, 1, hook.secret)).toMatchObject({ type: 'device.online', data: { occurred_at: fresh, device: { id: frontCounter } } });

    // The old secret alone no longer opens anything: a start with it would stop, naming CONNECTOR_SECRET.
    const line = unreadableSecretsLine(await checkSealedSecrets(after.db, box(oldSecret)));
    expect(line).toMatch(/^CONNECTOR_SECRET does not open 2 stored secrets \(hooks\.secret_cipher: 1, watches\.key_cipher: 1\): /);
    expect(line).toContain('CONNECTOR_SECRET_PREVIOUS');
    expect(line).not.toContain('\n');
  });

  test('a secret sealed with a third secret is reported, not skipped, and the rest is still re-sealed', async () => {
    const t = await buildTestApp({ env: { CONNECTOR_SECRET: newSecret, CONNECTOR_SECRET_PREVIOUS: oldSecret, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    open.push(t);
    for (const [id, secret] of [
      ['hook_old', oldSecret],
      ['hook_stranger', strangerSecret],
      ['hook_new', newSecret],
    ] as const) {
      await t.all(
        "INSERT INTO hooks (id, key_hash, target_url, events, device_ids, secret_cipher, status, created_at) VALUES (?, 'k', 'http://127.0.0.1:9/x', '[]', NULL, ?, 'active', '2026-01-01T00:00:00.000000Z')",
        id,
        box(secret).seal(`whsec_${id}`),
      );
    }
    const report = await resealSecrets(t.db, box(newSecret, oldSecret));
    expect(report).toEqual({ current: 1, previous: 1, resealed: 1, changedMeanwhile: 0, unreadable: { 'hooks.secret_cipher': 1 } });
    const resealed = await t.value<string>("SELECT secret_cipher FROM hooks WHERE id = 'hook_old'");
    expect(box(newSecret).open(resealed!)).toBe('whsec_hook_old');
    expect(unreadableSecretsLine(report)).toMatch(/^CONNECTOR_SECRET does not open 1 stored secret \(hooks\.secret_cipher: 1\)/);
  });

  test('every column of the schema named *_cipher is one the rotation covers', async () => {
    const t = await buildTestApp();
    open.push(t);
    const rows =
      testEngine === 'sqlite'
        ? await t.all<{ table_name: string; column_name: string }>(
            "SELECT m.name AS table_name, p.name AS column_name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table' AND p.name LIKE '%cipher'",
          )
        : await t.all<{ table_name: string; column_name: string }>(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name LIKE '%cipher'",
          );
    const live = rows.map((r) => `${r.table_name}.${r.column_name}`).sort();
    expect(live).toEqual(sealedColumns.map((c) => `${c.table}.${c.column}`).sort());
  });
});
