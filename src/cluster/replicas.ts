import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../paths.js';

/** The compiled service entry point every replica runs (`npm start` runs the same file). */
export const mainJs = join(projectRoot, 'dist', 'src', 'main.js');

export interface ReplicaOptions {
  /** A label for output and errors, e.g. `r1`. */
  name: string;
  port: number;
  /** The replica's whole environment (nothing else is inherited). */
  env: NodeJS.ProcessEnv;
  /** Each line the replica writes, as it comes. Default: dropped. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

export interface ReplicaExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * One service process (`node dist/src/main.js`) on 127.0.0.1:`port`, managed by its pid: started,
 * waited for (`/healthz`), stopped gracefully (SIGTERM, then SIGKILL after a grace period) or
 * killed outright (`kill -9`, for crash tests).
 */
export class Replica {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly url: string;
  /** Resolves when the process has exited (never rejects). */
  readonly exited: Promise<ReplicaExit>;
  exit: ReplicaExit | null = null;

  constructor(readonly options: ReplicaOptions) {
    this.url = `http://127.0.0.1:${options.port}`;
    this.child = spawn(process.execPath, [mainJs], {
      env: { ...options.env, PORT: String(options.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (this.child.pid === undefined) throw new Error(`${options.name}: could not start ${process.execPath} ${mainJs}`);
    this.pid = this.child.pid;
    const onLine = options.onLine ?? (() => undefined);
    createInterface({ input: this.child.stdout! }).on('line', (line) => onLine(line, 'stdout'));
    createInterface({ input: this.child.stderr! }).on('line', (line) => onLine(line, 'stderr'));
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Resolves once `GET /healthz` answers 200; rejects if the process exits first or on timeout. */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`${this.options.name} (pid ${this.pid}) exited before it was ready (${describeExit(this.exit!)})`);
      try {
        const res = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1000) });
        await res.arrayBuffer();
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${this.options.name} (pid ${this.pid}) did not answer /healthz within ${timeoutMs} ms`);
  }

  /** SIGTERM (the service finishes in-flight requests and closes), SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<ReplicaExit> {
    if (!this.running) return this.exit!;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /** `kill -9`: no shutdown at all, as a crash or an OOM kill would leave things. */
  async kill(): Promise<ReplicaExit> {
    this.signal('SIGKILL');
    return this.exited;
  }

  signal(name: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, name);
    } catch {
      // exited in between
    }
  }
}

export function describeExit(exit: ReplicaExit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}
