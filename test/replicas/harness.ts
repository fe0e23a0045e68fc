import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePortRange } from '../../src/cluster/ports.js';
import { Replica, describeExit } from '../../src/cluster/replicas.js';
import { fleetKey, type FleetUpstream } from '../../bench/lib/fleet-upstream.js';
import type { SigningReceiver } from './signing-receiver.js';

/**
 * Several service processes (`node dist/src/main.js`) on consecutive loopback ports, sharing
 * one database, for the replica tests: started, killed (`kill -9`), restarted on the same port
 * with the same environment, stopped. Each replica also gets its own DATABASE_PATH, used only
 * for what lives beside a database file (nothing, with DATABASE_URL and CONNECTOR_SECRET set).
 */
export class ReplicaSet {
  readonly replicas: Replica[] = [];
  /** Replicas that exited without being killed or stopped by the test. */
  readonly unexpectedExits: string[] = [];
  readonly kills: Array<{ index: number; at: number }> = [];
  private readonly output = new Map<string, string[]>();
  private readonly dir = mkdtempSync(join(tmpdir(), 'connector-replicas-'));
  private readonly intended = new Set<Replica>();
  private firstPort = 0;

  constructor(
    private readonly count: number,
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<this> {
    this.firstPort = await freePortRange(this.count);
    // The first one alone: it migrates the database; then the others together.
    await this.launch(0).waitHealthy(30_000);
    await Promise.all(Array.from({ length: this.count - 1 }, (_, i) => this.launch(i + 1).waitHealthy(30_000)));
    return this;
  }

  url(index: number): string {
    return this.replicas[index]!.url;
  }

  get running(): Replica[] {
    return this.replicas.filter((r) => r.running);
  }

  async kill(index: number): Promise<void> {
    const replica = this.replicas[index]!;
    this.intended.add(replica);
    this.kills.push({ index, at: Date.now() });
    await replica.kill();
  }

  async restart(index: number): Promise<void> {
    await this.launch(index).waitHealthy(30_000);
  }

  async stop(): Promise<void> {
    for (const r of this.replicas) this.intended.add(r);
    await Promise.all(this.replicas.map((r) => r.stop(10_000)));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last lines a replica wrote, for a failure message. */
  lastLines(index: number, count = 20): string {
    return (this.output.get(`r${index + 1}`) ?? []).slice(-count).join('\n');
  }

  private launch(index: number): Replica {
    const name = `r${index + 1}`;
    const lines = this.output.get(name) ?? [];
    this.output.set(name, lines);
    const replica = new Replica({
      name,
      port: this.firstPort + index,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOST: '127.0.0.1', ...this.env, DATABASE_PATH: join(this.dir, name, 'connector.db') },
      onLine: (line) => {
        lines.push(line);
        if (lines.length > 200) lines.splice(0, lines.length - 200);
      },
    });
    this.replicas[index] = replica;
    void replica.exited.then((exit) => {
      if (!this.intended.has(replica)) this.unexpectedExits.push(`${name} (pid ${replica.pid}): ${describeExit(exit)}\n${lines.slice(-20).join('\n')}`);
    });
    return replica;
  }
}

/** Runs `task` over `items` with at most `limit` at once. */
export async function inParallel<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await task(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Subscribes one hook per key of the fleet (`POST /v1/hooks`), spread over the replicas; keeps the secrets in the receiver. */
export async function subscribeAll(set: ReplicaSet, fleet: FleetUpstream, receiver: SigningReceiver, keys: readonly number[]): Promise<void> {
  await inParallel(keys, 8, async (key) => {
    // A subscription's baseline poll asks the upstream, whose timeout here is short: on a busy
    // machine a 504 is retried as a client would (the same subscription is the same hook).
    let res: Response;
    let body: { secret?: string; message?: string };
    for (let attempt = 1; ; attempt++) {
      res = await fetch(`${set.url(key % set.replicas.length)}/v1/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fleetKey(key)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target_url: receiver.target(key) }),
      });
      body = (await res.json()) as { secret?: string; message?: string };
      if (res.status !== 504 || attempt === 3) break;
    }
    if (res.status !== 201 || !body.secret) throw new Error(`POST /v1/hooks for key ${key}: ${res.status} ${JSON.stringify(body)}`);
    receiver.secrets.set(key, body.secret);
  });
}

export interface LoggedEvent {
  id: string;
  type: string;
  device: { id: string; last_heartbeat_at: string | null };
}

/** A key's whole event log, oldest first (`GET /v1/events`, paged with `after`). */
export async function eventsOf(baseUrl: string, key: number): Promise<LoggedEvent[]> {
  const all: LoggedEvent[] = [];
  for (;;) {
    const after = all.length ? `&after=${all.at(-1)!.id}` : '';
    const res = await fetch(`${baseUrl}/v1/events?limit=500${after}`, { headers: { authorization: `Bearer ${fleetKey(key)}` } });
    if (res.status !== 200) throw new Error(`GET /v1/events for key ${key}: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as LoggedEvent[];
    all.push(...page);
    if (page.length < 500) return all;
  }
}

/** The identity of a transition that the upstream caused, as an event carries it. */
export const transitionKey = (deviceId: string, type: string, heartbeat: string | null) => `${deviceId.toLowerCase()}|${type}|${heartbeat}`;
