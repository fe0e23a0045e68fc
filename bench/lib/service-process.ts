import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot } from '../../src/paths.js';

/**
 * The service as it runs in production: `node dist/src/main.js` (what `npm start` runs) in its
 * own process, with only the environment given (run in `cwd`, so no .env of the checkout is
 * read), listening on 127.0.0.1 on a port the system picks (PORT=0; the port is read from its
 * `listening` log line). Stopped by its pid: SIGTERM,
 * then SIGKILL after a grace period. BENCH_CHILD_PROF=<dir> runs it under `--cpu-prof`; BENCH_CHILD_IMPORT=<module>
 * loads a module first (`--import`: a probe's hooks, for instance).
 */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export class ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  url = '';
  /** The last lines it wrote, for error messages. */
  readonly tail: string[] = [];
  private exit: string | null = null;
  private readonly exited: Promise<void>;

  constructor(env: NodeJS.ProcessEnv, cwd: string) {
    const prof = process.env.BENCH_CHILD_PROF;
    // BENCH_CHILD_IMPORT=<module>: a module the service loads first (a probe's hooks, for instance).
    const preload = process.env.BENCH_CHILD_IMPORT;
    const args = [
      ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
      ...(preload ? ['--import', preload] : []),
      join(projectRoot, 'dist', 'src', 'main.js'),
    ];
    this.child = spawn(process.execPath, args, { env: { ...env, HOST: '127.0.0.1', PORT: '0', LOG_FORMAT: 'json' }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    if (this.child.pid === undefined) throw new Error('could not start the service');
    this.pid = this.child.pid;
    live.add(this.child);
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        this.exit = signal ? `signal ${signal}` : `exit code ${code}`;
        resolve();
      });
    });
    const onLine = (line: string) => {
      this.tail.push(line);
      if (this.tail.length > 20) this.tail.shift();
      if (!this.url && line.includes('"listening"')) {
        const port = (JSON.parse(line) as { port?: number }).port;
        if (port) this.url = `http://127.0.0.1:${port}`;
      }
    };
    createInterface({ input: this.child.stdout! }).on('line', onLine);
    createInterface({ input: this.child.stderr! }).on('line', onLine);
  }

  get running(): boolean {
    return this.exit === null;
  }

  /** Resolves once `GET /healthz` answers 200; throws when it exits first or `timeoutMs` passes. */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`the service exited before it was ready (${this.exit}): ${this.tail.slice(-5).join(' / ')}`);
      if (this.url) {
        const ok = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
          async (res) => (await res.arrayBuffer(), res.status === 200),
          () => false,
        );
        if (ok) return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the service did not answer /healthz within ${timeoutMs} ms`);
  }

  /** Peak and current resident memory from /proc/<pid>/status (bytes); null where there is no /proc. */
  memory(): { peak: number; now: number } | null {
    try {
      const status = readFileSync(`/proc/${this.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
      return { peak: kb('VmHWM'), now: kb('VmRSS') };
    } catch {
      return null;
    }
  }

  /** CPU time (user + system, all threads) the process has used so far, in ms, from /proc/<pid>/stat; NaN where there is none. */
  cpuMs(): number {
    try {
      const fields = readFileSync(`/proc/${this.pid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ');
      // utime and stime are fields 14 and 15 of the line (11 and 12 after the command), in clock ticks (100 a second on Linux).
      return (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return NaN;
    }
  }

  /** SIGTERM (in-flight requests finish, claimed deliveries are handed back), SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
