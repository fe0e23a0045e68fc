import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

export const mainJs = join(projectRoot, 'dist', 'src', 'main.js');

export { ensureBuild } from './processes.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * `node dist/src/main.js` whose stdout goes into a separate reader process (`cat`), the way
 * `node main.js | some-log-shipper` runs: the test can stop (SIGSTOP) or kill that reader.
 * What the reader passes on is collected in `output()`.
 */
export class PipedServer {
  port = 0;
  readonly server: ChildProcess;
  readonly reader: ChildProcess;
  readonly exited: Promise<Exit>;
  private out = '';
  private err = '';

  constructor(env: Record<string, string>) {
    this.reader = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.server = spawn(process.execPath, [mainJs], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PORT: '0', HOST: '127.0.0.1', ...env },
      stdio: ['ignore', this.reader.stdin!, 'pipe'],
      timeout: 60_000, // a hard bound whatever happens to the test
      killSignal: 'SIGKILL',
    });
    // The child holds its own copy of the pipe's write end.
    this.reader.stdin!.destroy();
    this.reader.stdout!.on('data', (chunk) => (this.out += chunk));
    this.server.stderr!.on('data', (chunk) => (this.err += chunk));
    this.exited = new Promise((resolve) => this.server.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /** Resolves once the `listening` line (either log format) went through the reader. */
  async started(timeoutMs = 20_000): Promise<this> {
    await this.waitFor(/listening.*"port":\d+|"port":\d+.*listening/, timeoutMs);
    this.port = Number(/"port":(\d+)/.exec(this.out)![1]);
    return this;
  }

  output(): string {
    return this.out;
  }

  stderr(): string {
    return this.err;
  }

  /** Resident memory of the server process, in MB. */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.server.pid}/status`, 'utf8');
    return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
  }

  async waitFor(pattern: RegExp, timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (!pattern.test(this.out)) {
      if (Date.now() > until) throw new Error(`no ${pattern} within ${timeoutMs} ms\nstdout:\n${this.out}\nstderr:\n${this.err}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** `count` GETs of `path`, `concurrency` at a time over keep-alive connections. */
  async load(path: string, count: number, headers: Record<string, string> = {}, concurrency = 8): Promise<void> {
    const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
    let sent = 0;
    const one = () =>
      new Promise<void>((resolve, reject) => {
        httpRequest({ host: '127.0.0.1', port: this.port, path, headers, agent }, (res) => res.resume().on('end', resolve))
          .on('error', reject)
          .end();
      });
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < count) {
          sent += 1;
          await one();
        }
      }),
    );
    agent.destroy();
  }

  /** SIGTERM; resolves with how it ended and how long it took, or `null` if it did not end in `timeoutMs`. */
  async terminate(timeoutMs: number): Promise<(Exit & { ms: number }) | null> {
    const started = Date.now();
    this.server.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs)));
    const result = await Promise.race([this.exited.then((exit) => ({ ...exit, ms: Date.now() - started })), late]);
    clearTimeout(timer);
    return result;
  }

  /** Ends both processes, whatever state they are in. */
  kill(): void {
    for (const child of [this.server, this.reader]) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  }
}
