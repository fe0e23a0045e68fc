import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/** Builds dist/ when it is missing or stale (the tests here run the compiled service). */
export async function ensureBuild(): Promise<void> {
  const child = spawn(process.execPath, [join(projectRoot, 'scripts', 'ensure-build.mjs')], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`ensure-build failed (${code}):\n${output}`);
}

/** True while a process with this pid exists (and is not a zombie we could still reap). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the processes whose command line contains `text` (Linux: /proc). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** Polls `check` every 50 ms until it holds; throws `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A command-line process under test, its output collected as it comes. Whatever a test
 * leaves running is killed (SIGKILL, by pid) by `killAll` in afterAll.
 */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private static readonly live = new Set<CliProcess>();

  constructor(script: string, args: string[], env: Record<string, string>) {
    this.child = spawn(process.execPath, [script, ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    CliProcess.live.add(this);
    this.child.stdout!.on('data', (chunk) => (this.stdout += chunk));
    this.child.stderr!.on('data', (chunk) => (this.stderr += chunk));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        CliProcess.live.delete(this);
        resolve({ code, signal });
      }),
    );
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves once stdout contains `text`; rejects if the process exits first or on timeout. */
  async waitForOutput(text: string, timeoutMs: number): Promise<void> {
    let gone = false;
    void this.exited.then(() => (gone = true));
    await waitFor(
      `"${text}" in the output`,
      () => {
        if (this.stdout.includes(text)) return true;
        if (gone) throw new Error(`process exited before printing "${text}":\n${this.stdout}\n${this.stderr}`);
        return false;
      },
      timeoutMs,
    );
  }

  static killAll(): void {
    for (const p of CliProcess.live) p.child.kill('SIGKILL');
  }
}
