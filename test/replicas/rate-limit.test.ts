import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { openDatabase } from '../../src/db/database.js';
import { importDataset } from '../../src/dataset/import.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { ensureBuild } from '../helpers/processes.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { ReplicaSet } from './harness.js';

/**
 * The per-key rate limit across replicas (docs/keys.md): three replicas (real processes) on one
 * PostgreSQL database, one key with its own limit of 120 a minute hammered through all three
 * at once, round-robin, for 8 s. Over the span T of the run the key gets at most
 * 1.1 × (limit + limit × T / 60) answers that are not 429, and at least 90 % of the minute's
 * quota it started with; every answer carries the RateLimit headers; every 429 a Retry-After.
 */
// Low enough that a busy 2-core machine still sends well past it within the run.
const limit = 120;
const runMs = 8000;
const concurrency = 12;

let db: TestDatabase;
let set: ReplicaSet | undefined;

beforeAll(async () => {
  await ensureBuild();
  db = await createTestDatabase();
}, 180_000);

afterAll(async () => {
  await set?.stop();
  await db?.drop();
});

describe('per-key rate limit, 3 replicas on PostgreSQL', () => {
  test('the key is held to its limit within 10 % across the replicas, with RateLimit headers on every answer', async () => {
    const dataset = catalog() as { api_keys: Array<Record<string, unknown>> };
    dataset.api_keys.find((k) => k.id === 'key_ana')!.rate_limit_per_minute = limit;
    // Imported once before the replicas start (each would import a DATASET at its own start).
    const store = await openDatabase({ url: db.url });
    try {
      await importDataset(store, dataset, { nowMs: Date.now() });
    } finally {
      await store.close();
    }
    set = await new ReplicaSet(3, { DATABASE_URL: db.url, CONNECTOR_SECRET: '7'.repeat(64), LOG_LEVEL: 'fatal' }).start();

    const statuses = new Map<number, number>();
    const problems: string[] = [];
    let next = 0;
    const started = Date.now();
    let lastEnd = started;
    const worker = async () => {
      while (Date.now() - started < runMs) {
        const url = set!.url(next++ % 3);
        const res = await fetch(`${url}/v1/me`, { headers: { 'x-api-key': keys.ana } });
        await res.arrayBuffer();
        lastEnd = Math.max(lastEnd, Date.now());
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.headers.get('ratelimit-policy') !== `"default";q=${limit};w=60`) problems.push(`${res.status} without RateLimit-Policy`);
        if (!/^"default";r=\d+;t=\d+$/.test(res.headers.get('ratelimit') ?? '')) problems.push(`${res.status} with RateLimit ${res.headers.get('ratelimit')}`);
        if (res.status === 429 && !/^\d+$/.test(res.headers.get('retry-after') ?? '')) problems.push('429 without Retry-After');
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const spanSeconds = (lastEnd - started) / 1000;
    const granted = statuses.get(200) ?? 0;
    const bound = 1.1 * (limit + (limit * spanSeconds) / 60);
    const summary = { granted, refused: statuses.get(429) ?? 0, other: [...statuses].filter(([s]) => s !== 200 && s !== 429), spanSeconds, bound };
    expect(problems.slice(0, 5)).toEqual([]);
    expect(summary.other).toEqual([]);
    // Demand went past the limit, so the limit is what held the key back.
    expect([summary, summary.refused > 0]).toEqual([summary, true]);
    expect([summary, granted <= bound]).toEqual([summary, true]);
    expect([summary, granted >= 0.9 * limit]).toEqual([summary, true]);
  }, 120_000);
});
