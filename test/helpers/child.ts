import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

export const mainJs = join(projectRoot, 'dist', 'src', 'main.js');
export const demoJs = join(projectRoot, 'dist', 'src', 'cli', 'demo.js');
export const importJs = join(projectRoot, 'dist', 'src', 'cli', 'import.js');

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * A built entry point run as a real process with a clean environment (nothing from the test
 * runner's own env leaks into the child's config), killed by its pid after `timeoutMs`.
 */
export class Child {
  readonly process: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<Exited>;

  constructor(script: string, options: { args?: string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) {
    this.process = spawn(process.execPath, [script, ...(options.args ?? [])], {
      cwd: options.cwd ?? projectRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'warn', ...options.env },
      timeout: options.timeoutMs ?? 30_000,
      killSignal: 'SIGKILL',
    });
    this.process.stdout!.on('data', (chunk) => (this.stdout += chunk));
    this.process.stderr!.on('data', (chunk) => (this.stderr += chunk));
    this.exited = new Promise((resolve, reject) => {
      this.process.on('error', reject);
      this.process.on('close', (code, signal) => resolve({ code, signal, stdout: this.stdout, stderr: this.stderr }));
    });
  }

  /** Resolves with the first match of `pattern` on stdout; rejects if the process ends first. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.stdout);
      if (match) return match;
      if (this.process.exitCode !== null || this.process.signalCode !== null) {
        throw new Error(`process ended before ${pattern}:\n${this.stderr}${this.stdout}`);
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${this.stderr}${this.stdout}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops the process (SIGTERM to its own pid) and waits for it. */
  async stop(): Promise<Exited> {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM');
    return this.exited;
  }
}
