import { describe, expect, test } from '@jest/globals';
import { fastDevice, fastDevicePage } from '../../src/upstream/fast-devices.js';
import { deviceSchema, devicePageSchema } from '../../src/upstream/schemas.js';
import { collectRejected } from '../../src/upstream/rejected.js';
import { upstreamDevice } from '../fixtures/upstream-device.js';

/**
 * The hand-checked device parses must never disagree with the schema: on every input either
 * they step aside (undefined) or they return exactly what the schema returns, in the same
 * order of fields (an event's payload is the device as JSON).
 */
const valid = upstreamDevice;

const fields = Object.keys(valid) as Array<keyof typeof valid>;
const odd: unknown[] = [
  null,
  '',
  'text',
  0,
  -0,
  1.5,
  -55,
  2 ** 53,
  true,
  false,
  [],
  {},
  ['x'],
  '2025-01-01T00:00:00Z',
  '2025-01-01T00:00:00.000000Z',
  '2025-02-30T00:00:00.000000Z',
  '2025-01-01T00:00:00.000000+00:00',
  '1600-01-01T00:00:00.000000Z',
  'now-10m',
];

/** Every record: the valid one, each field set to each odd value, each field left out, extra fields. */
function variants(): unknown[] {
  const out: unknown[] = [
    valid,
    { ...valid, extra: 1 },
    JSON.parse(`{"__proto__": 1, ${JSON.stringify(valid).slice(1)}`) as unknown,
    { ...valid, id: 'lower:case' },
    null,
    [],
    'device',
    42,
  ];
  for (const field of fields) {
    const { [field]: _dropped, ...without } = valid;
    out.push(without);
    for (const value of odd) out.push({ ...valid, [field]: value });
  }
  return out;
}

function agrees<T>(fast: T | undefined, parsed: { success: boolean; data?: T }): void {
  if (fast === undefined) return;
  expect(parsed.success).toBe(true);
  expect(JSON.stringify(fast)).toBe(JSON.stringify(parsed.data));
  expect(fast).toEqual(parsed.data);
}

describe('hand-checked device parses agree with the schema', () => {
  test('a record: the same device, or left to the schema', () => {
    let taken = 0;
    for (const raw of variants()) {
      const fast = fastDevice(raw);
      if (fast !== undefined) taken += 1;
      agrees(fast, deviceSchema.safeParse(raw));
    }
    // The common case does take the fast way.
    expect(fastDevice(valid)).toBeDefined();
    expect(taken).toBeGreaterThan(10);
  });

  test('a page: every record valid takes the fast way; one invalid record leaves the page to the schema', () => {
    const page = { total: 3, data: [valid, { ...valid, id: 'B' }, { ...valid, is_online: false, last_heartbeat_at: null }] };
    const fast = fastDevicePage(page);
    expect(fast).toBeDefined();
    agrees(fast, devicePageSchema.safeParse(page));
    for (const raw of variants()) {
      const withOne = { total: 2, data: [valid, raw] };
      const quick = fastDevicePage(withOne);
      const { result } = collectRejected(() => devicePageSchema.safeParse(withOne));
      agrees(quick, result);
      // Whatever the schema would leave out (and report), the fast way never takes.
      if (result.success && result.data.data.length < 2) expect(quick).toBeUndefined();
    }
    for (const envelope of [
      null,
      [],
      { total: -1, data: [] },
      { total: 1.5, data: [] },
      { total: '3', data: [] },
      { total: 1, data: {} },
      { data: [] },
      { total: 0 },
    ]) {
      const quick = fastDevicePage(envelope);
      agrees(quick, devicePageSchema.safeParse(envelope));
      expect(quick).toBeUndefined();
    }
    agrees(fastDevicePage({ total: 0, data: [] }), devicePageSchema.safeParse({ total: 0, data: [] }));
  });
});
