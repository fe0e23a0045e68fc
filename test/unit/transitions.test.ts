import { describe, expect, test } from '@jest/globals';
import type { Device } from '../../src/sources/types.js';
import { detectTransitions, eventId, type Snapshot } from '../../src/triggers/transitions.js';

const timeoutMs = 300_000;
const nowMs = Date.parse('2026-06-01T12:10:00.000Z');

function device(id: string, heartbeat: string | null, online: boolean, extra: Partial<Device> = {}): Device {
  return {
    id,
    name: `Screen ${id}`,
    timezone: 'America/Chicago',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: '2025-01-10T09:00:00.123456Z',
    published_at: null,
    last_heartbeat_at: heartbeat,
    is_online: online,
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'wifi',
    wifi_ssid: null,
    wifi_signal_strength: null,
    updated_at: '2025-06-01T12:00:00.000000Z',
    created_at: '2025-01-10T09:00:00.123456Z',
    ...extra,
  };
}

const snap = (entries: Array<[string, Snapshot['status'], string | null]>) =>
  new Map(entries.map(([id, status, hb]) => [id, { status, last_heartbeat_at: hb }]));

describe('detectTransitions', () => {
  test('an empty snapshot (baseline) yields no events and records every device', () => {
    const devices = [
      device('a4:83:e7:00:00:01', '2026-06-01T12:09:30.000000Z', true),
      device('a4:83:e7:00:00:02', '2026-05-29T12:00:00.000000Z', false),
      device('a4:83:e7:00:00:03', null, false),
    ];
    const { events, snapshot } = detectTransitions(new Map(), devices, timeoutMs, nowMs);
    expect(events).toEqual([]);
    expect([...snapshot.entries()]).toEqual([
      ['a4:83:e7:00:00:01', { status: 'online', last_heartbeat_at: '2026-06-01T12:09:30.000000Z' }],
      ['a4:83:e7:00:00:02', { status: 'offline', last_heartbeat_at: '2026-05-29T12:00:00.000000Z' }],
      ['a4:83:e7:00:00:03', { status: 'offline', last_heartbeat_at: null }],
    ]);
  });

  test('a device new to the snapshot is silent, whatever its status', () => {
    const previous = snap([['a4:83:e7:00:00:01', 'online', '2026-06-01T12:09:30.000000Z']]);
    const { events, snapshot } = detectTransitions(
      previous,
      [device('a4:83:e7:00:00:01', '2026-06-01T12:09:30.000000Z', true), device('a4:83:e7:00:00:09', '2026-05-01T00:00:00.000000Z', false)],
      timeoutMs,
      nowMs,
    );
    expect(events).toEqual([]);
    expect(snapshot.get('a4:83:e7:00:00:09')).toEqual({ status: 'offline', last_heartbeat_at: '2026-05-01T00:00:00.000000Z' });
  });

  test('online → offline: occurred_at is the last heartbeat + the timeout, microseconds kept', () => {
    const hb = '2026-06-01T12:04:30.123456Z';
    const previous = snap([['a4:83:e7:00:00:01', 'online', hb]]);
    const now = device('a4:83:e7:00:00:01', hb, false);
    const { events, snapshot } = detectTransitions(previous, [now], timeoutMs, nowMs);
    expect(events).toEqual([
      {
        id: eventId('a4:83:e7:00:00:01', 'device.offline', hb),
        type: 'device.offline',
        occurred_at: '2026-06-01T12:09:30.123456Z',
        device: now,
        previous_status: 'online',
        status: 'offline',
      },
    ]);
    expect(Object.keys(events[0]!)).toEqual(['id', 'type', 'occurred_at', 'device', 'previous_status', 'status']);
    // The row remembers the event: the device's next one chains its id on it and is never dated before it.
    expect(snapshot.get('a4:83:e7:00:00:01')).toEqual({
      status: 'offline',
      last_heartbeat_at: hb,
      last_event_id: events[0]!.id,
      last_event_at: '2026-06-01T12:09:30.123456Z',
    });
  });

  test('the offline instant crosses day boundaries and uses the configured timeout', () => {
    const hb = '2026-05-31T23:59:59.999999Z';
    const { events } = detectTransitions(snap([['d1', 'online', hb]]), [device('d1', hb, false)], 60_000, nowMs);
    expect(events[0]!.occurred_at).toBe('2026-06-01T00:00:59.999999Z');
  });

  test('offline → online: occurred_at is the new heartbeat', () => {
    const old = '2026-05-29T12:00:00.000000Z';
    const hb = '2026-06-01T12:09:58.000007Z';
    const previous = snap([['a4:83:e7:00:00:02', 'offline', old]]);
    const now = device('a4:83:e7:00:00:02', hb, true);
    const { events } = detectTransitions(previous, [now], timeoutMs, nowMs);
    expect(events).toEqual([
      {
        id: eventId('a4:83:e7:00:00:02', 'device.online', hb),
        type: 'device.online',
        occurred_at: hb,
        device: now,
        previous_status: 'offline',
        status: 'online',
      },
    ]);
  });

  test('a never-seen device (no heartbeat) coming online for the first time', () => {
    const hb = '2026-06-01T12:09:00.500000Z';
    const previous = snap([['a4:83:e7:00:00:03', 'offline', null]]);
    const { events } = detectTransitions(previous, [device('a4:83:e7:00:00:03', hb, true)], timeoutMs, nowMs);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'device.online', occurred_at: hb, previous_status: 'offline', status: 'online' });
    expect(events[0]!.id).toBe(eventId('a4:83:e7:00:00:03', 'device.online', hb));
  });

  test('a never-seen device that stays offline emits nothing', () => {
    const previous = snap([['a4:83:e7:00:00:03', 'offline', null]]);
    expect(detectTransitions(previous, [device('a4:83:e7:00:00:03', null, false)], timeoutMs, nowMs).events).toEqual([]);
  });

  test('an online device reported offline with no heartbeat goes offline "now"', () => {
    const previous = snap([['d1', 'online', '2026-06-01T12:09:00.000000Z']]);
    const { events } = detectTransitions(previous, [device('d1', null, false)], timeoutMs, nowMs);
    expect(events[0]).toMatchObject({ type: 'device.offline', occurred_at: '2026-06-01T12:10:00.000000Z' });
  });

  test('no change in status: no event, even when the heartbeat moves', () => {
    const previous = snap([
      ['d1', 'online', '2026-06-01T12:08:00.000000Z'],
      ['d2', 'offline', '2026-05-01T00:00:00.000000Z'],
    ]);
    const { events, snapshot } = detectTransitions(
      previous,
      [device('d1', '2026-06-01T12:09:50.000000Z', true), device('d2', '2026-05-01T00:00:00.000000Z', false)],
      timeoutMs,
      nowMs,
    );
    expect(events).toEqual([]);
    expect(snapshot.get('d1')!.last_heartbeat_at).toBe('2026-06-01T12:09:50.000000Z');
  });

  test('a device gone from the list is dropped from the snapshot without an event', () => {
    const previous = snap([
      ['d1', 'online', '2026-06-01T12:09:00.000000Z'],
      ['d2', 'online', '2026-06-01T12:09:00.000000Z'],
    ]);
    const { events, snapshot } = detectTransitions(previous, [device('d1', '2026-06-01T12:09:00.000000Z', true)], timeoutMs, nowMs);
    expect(events).toEqual([]);
    expect([...snapshot.keys()]).toEqual(['d1']);
  });

  test('device ids are lower-cased in the snapshot and the event, and matched case-insensitively', () => {
    const hb = '2026-06-01T12:04:00.000000Z';
    const previous = snap([['a4:83:e7:1f:2b:01', 'online', hb]]);
    const { events, snapshot } = detectTransitions(previous, [device('A4:83:E7:1F:2B:01', hb, false)], timeoutMs, nowMs);
    expect(events).toHaveLength(1);
    expect(events[0]!.device.id).toBe('a4:83:e7:1f:2b:01');
    expect([...snapshot.keys()]).toEqual(['a4:83:e7:1f:2b:01']);
  });

  test('several devices change in one diff, in input order', () => {
    const previous = snap([
      ['d1', 'online', '2026-06-01T12:00:00.000000Z'],
      ['d2', 'offline', '2026-06-01T11:00:00.000000Z'],
      ['d3', 'online', '2026-06-01T12:09:00.000000Z'],
    ]);
    const { events } = detectTransitions(
      previous,
      [
        device('d1', '2026-06-01T12:00:00.000000Z', false),
        device('d2', '2026-06-01T12:09:59.000000Z', true),
        device('d3', '2026-06-01T12:09:00.000000Z', true),
      ],
      timeoutMs,
      nowMs,
    );
    expect(events.map((e) => [e.device.id, e.type])).toEqual([
      ['d1', 'device.offline'],
      ['d2', 'device.online'],
    ]);
  });

  test('the input devices are not mutated', () => {
    const raw = device('A4:83:E7:1F:2B:01', '2026-06-01T12:04:00.000000Z', false);
    const copy = structuredClone(raw);
    detectTransitions(snap([['a4:83:e7:1f:2b:01', 'online', raw.last_heartbeat_at]]), [raw], timeoutMs, nowMs);
    expect(raw).toEqual(copy);
  });

  test('a replayed diff (a restart or a replica) yields the same ids', () => {
    const hb = '2026-06-01T12:04:30.123456Z';
    const previous = snap([['d1', 'online', hb]]);
    const first = detectTransitions(previous, [device('d1', hb, false)], timeoutMs, nowMs);
    const again = detectTransitions(previous, [device('d1', hb, false)], timeoutMs, nowMs + 45_000);
    expect(again.events[0]!.id).toBe(first.events[0]!.id);
  });
});

describe('detectTransitions: clocks and repeats', () => {
  const hb = '2026-06-01T12:00:00.000000Z';

  test("a heartbeat more than a minute past the poll's time is taken as that time, and reported", () => {
    const ahead = '2026-06-01T13:10:00.000000Z';
    const { events, future } = detectTransitions(snap([['d1', 'online', hb]]), [device('d1', ahead, false)], timeoutMs, nowMs);
    expect(events[0]).toMatchObject({ type: 'device.offline', occurred_at: '2026-06-01T12:10:00.000000Z' });
    expect(future).toEqual([{ id: 'd1', heartbeat: ahead }]);
    // Within a minute (clocks that disagree a little): taken as it is.
    const near = '2026-06-01T12:10:30.000000Z';
    const online = detectTransitions(snap([['d1', 'offline', hb]]), [device('d1', near, true)], timeoutMs, nowMs);
    expect(online.events[0]!.occurred_at).toBe(near);
    expect(online.future).toEqual([]);
  });

  test("an event is never dated before the device's previous one", () => {
    const previous = new Map([
      ['d1', { status: 'offline' as const, last_heartbeat_at: hb, last_event_id: 'evt_prev', last_event_at: '2026-06-01T12:05:00.000000Z' }],
    ]);
    const { events } = detectTransitions(previous, [device('d1', hb, true)], timeoutMs, nowMs);
    expect(events[0]!.occurred_at).toBe('2026-06-01T12:05:00.000000Z');
  });

  test('a second transition with the same heartbeat gets its own id, chained on the previous event', () => {
    const first = detectTransitions(snap([['d1', 'online', hb]]), [device('d1', hb, false)], timeoutMs, nowMs);
    const back = detectTransitions(first.snapshot, [device('d1', hb, true)], timeoutMs, nowMs);
    const second = detectTransitions(back.snapshot, [device('d1', hb, false)], timeoutMs, nowMs);
    expect(first.events[0]!.id).toBe(eventId('d1', 'device.offline', hb));
    expect(back.events[0]!.id).toBe(eventId('d1', 'device.online', hb, first.events[0]!.id));
    expect(second.events[0]!.id).toBe(eventId('d1', 'device.offline', hb, back.events[0]!.id));
    expect(second.events[0]!.id).not.toBe(first.events[0]!.id);
  });
});

describe('eventId', () => {
  const hb = '2026-06-01T12:04:30.123456Z';

  test('same device, type and heartbeat → same id', () => {
    expect(eventId('a4:83:e7:1f:2b:01', 'device.offline', hb)).toBe(eventId('a4:83:e7:1f:2b:01', 'device.offline', hb));
  });

  test('is case-insensitive on the device id', () => {
    expect(eventId('A4:83:E7:1F:2B:01', 'device.offline', hb)).toBe(eventId('a4:83:e7:1f:2b:01', 'device.offline', hb));
  });

  test('a different heartbeat, type or device → a different id', () => {
    const base = eventId('a4:83:e7:1f:2b:01', 'device.offline', hb);
    expect(eventId('a4:83:e7:1f:2b:01', 'device.offline', '2026-06-01T12:04:30.123457Z')).not.toBe(base);
    expect(eventId('a4:83:e7:1f:2b:01', 'device.online', hb)).not.toBe(base);
    expect(eventId('a4:83:e7:1f:2b:02', 'device.offline', hb)).not.toBe(base);
    expect(eventId('a4:83:e7:1f:2b:01', 'device.offline', null)).not.toBe(base);
  });

  test('has a stable, prefixed form', () => {
    expect(eventId('a4:83:e7:1f:2b:01', 'device.offline', hb)).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(eventId('a4:83:e7:1f:2b:01', 'device.offline', null)).toBe(eventId('a4:83:e7:1f:2b:01', 'device.offline', null));
  });

  test('is pinned: replicas and restarts on other builds must mint the same id for one transition', () => {
    expect(eventId('A4:83:E7:1F:2B:01', 'device.offline', hb)).toBe('evt_8db9632ed6861b30389191f87074778d');
  });
});
