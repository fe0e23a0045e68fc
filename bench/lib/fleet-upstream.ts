import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatMicros } from '../../src/time/timestamps.js';

/**
 * A device upstream (docs/devices.md: `GET /devices`, `GET /devices/{id}`, `Authorization: Bearer`)
 * for many keys at once, each seeing its own devices, held in memory and served by a bare
 * node:http server on 127.0.0.1:0. It records every poll (a `GET /devices` for page 1 with
 * page_size=1000, as the connector's poller pages) per key with its time, and every status
 * change it makes (`flip`), so a test knows which events the connector must produce.
 * Used by the replica tests (test/replicas/) and bench row 5.
 */
export interface FleetDevice {
  id: string;
  online: boolean;
  heartbeatMicros: number;
}

export interface Transition {
  key: number;
  deviceId: string;
  type: 'device.offline' | 'device.online';
  /** `last_heartbeat_at` as served after the change: with the device and type, the event's identity. */
  heartbeat: string;
  at: number;
}

const offlineAgeMicros = 6 * 60 * 1_000_000; // past the default 5-minute HEARTBEAT_TIMEOUT_MS

export function fleetKey(index: number): string {
  return `sk_fleet_${String(index).padStart(5, '0')}_0123456789abcdef`;
}

export function fleetDeviceId(key: number, device: number): string {
  const hex = ((key << 8) | device).toString(16).padStart(8, '0');
  return `0a:f1:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

export class FleetUpstream {
  readonly devices: FleetDevice[][];
  /** Per key: the times (Date.now()) of its polls. */
  readonly polls: number[][];
  /**
   * Per key, beside `polls`: each poll's X-Request-Id. The attempts of one upstream call (a
   * retry after a timeout or a 5xx) carry the same id (docs/upstream.md), so two entries with
   * one id are one poll asked twice, not two polls.
   */
  readonly pollIds: string[][];
  readonly transitions: Transition[] = [];
  calls = 0;
  url = '';
  private readonly byKey = new Map<string, number>();
  private server: Server | null = null;

  constructor(
    readonly keyCount: number,
    readonly devicesPerKey: number,
  ) {
    if (devicesPerKey > 256) throw new Error('at most 256 devices per key');
    const now = Date.now() * 1000;
    this.devices = Array.from({ length: keyCount }, (_, k) =>
      Array.from({ length: devicesPerKey }, (_, d) => ({ id: fleetDeviceId(k, d), online: true, heartbeatMicros: now - 30_000_000 })),
    );
    this.polls = Array.from({ length: keyCount }, () => []);
    this.pollIds = Array.from({ length: keyCount }, () => []);
    for (let k = 0; k < keyCount; k += 1) this.byKey.set(fleetKey(k), k);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = null;
  }

  /** Turns a device offline (heartbeat 6 minutes old) or back online (heartbeat now). */
  flip(key: number, device: number): Transition {
    const d = this.devices[key]![device]!;
    const now = Date.now();
    d.online = !d.online;
    d.heartbeatMicros = d.online ? now * 1000 : now * 1000 - offlineAgeMicros;
    const t: Transition = { key, deviceId: d.id, type: d.online ? 'device.online' : 'device.offline', heartbeat: formatMicros(d.heartbeatMicros), at: now };
    this.transitions.push(t);
    return t;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.calls += 1;
    const url = new URL(req.url ?? '/', 'http://upstream');
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const key = auth ? this.byKey.get(auth[1]!) : undefined;
    if (req.method !== 'GET') return send(res, 404, { message: 'Not found' });
    if (key === undefined) return send(res, 401, { message: auth ? 'Invalid API key' : 'Missing API key' });
    if (url.pathname === '/devices') return this.list(key, url, String(req.headers['x-request-id'] ?? ''), res);
    const one = /^\/devices\/([^/]+)$/.exec(url.pathname);
    if (!one) return send(res, 404, { message: 'Not found' });
    const wanted = decodeURIComponent(one[1]!).toLowerCase();
    const device = this.devices[key]!.find((d) => d.id === wanted);
    if (!device) return send(res, 404, { message: 'Device not found' });
    send(res, 200, deviceJson(device, false));
  }

  /** Forgets the polls recorded so far (a bench's measurement starts). */
  clearPolls(): void {
    for (const times of this.polls) times.length = 0;
    for (const ids of this.pollIds) ids.length = 0;
  }

  private list(key: number, url: URL, requestId: string, res: ServerResponse): void {
    const page = Number(url.searchParams.get('page') ?? '1');
    const pageSize = Number(url.searchParams.get('page_size') ?? '100');
    if (!Number.isInteger(page) || page < 1) return send(res, 400, { message: 'page must be an integer ≥ 1' });
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) return send(res, 400, { message: 'page_size must be an integer from 1 to 1000' });
    if (page === 1 && pageSize === 1000) {
      this.polls[key]!.push(Date.now());
      this.pollIds[key]!.push(requestId);
    }
    let devices = this.devices[key]!;
    const online = url.searchParams.get('is_online');
    if (online === 'true' || online === 'false') devices = devices.filter((d) => d.online === (online === 'true'));
    const ids = url.searchParams.get('ids');
    if (ids) {
      const wanted = new Set(ids.split(',').map((id) => id.trim().toLowerCase()));
      devices = devices.filter((d) => wanted.has(d.id));
    }
    const data = devices.slice((page - 1) * pageSize, page * pageSize).map((d) => deviceJson(d, true));
    send(res, 200, { total: devices.length, data });
  }
}

function deviceJson(d: FleetDevice, upperCaseId: boolean) {
  const stamp = '2025-01-01T00:00:00.000000Z';
  return {
    id: upperCaseId ? d.id.toUpperCase() : d.id,
    name: `Fleet screen ${d.id.slice(-5)}`,
    timezone: 'Europe/Berlin',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: stamp,
    published_at: null,
    last_heartbeat_at: formatMicros(d.heartbeatMicros),
    is_online: d.online,
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'wifi',
    wifi_ssid: 'Fleet',
    wifi_signal_strength: -55,
    updated_at: stamp,
    created_at: stamp,
  };
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
