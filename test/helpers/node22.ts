import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { zapierCliNode } from '../../src/export/zapier/exporter.js';
import { projectRoot } from '../../src/paths.js';

/**
 * A Node.js 22 binary for running the Zapier CLI in tests (it refuses older ones). This
 * project cannot depend on the `node` package the way the generated app does: its `node`
 * bin would shadow the Node.js that better-sqlite3 was compiled for in every npm script. So
 * the same binary is fetched with the npm client (`npm pack node-<os>-<arch>@<version>`, from
 * the npm registry or npm's cache) and kept in node_modules/.cache.
 */

export type Node22 = { path: string; reason?: undefined } | { path?: undefined; reason: string };

const cacheDir = join(projectRoot, 'node_modules', '.cache', `node-${zapierCliNode}`);

/** The npm package that carries the binary for this machine (the `node` package's own choice). */
function binaryPackage(): string | undefined {
  if (process.platform !== 'linux' && process.platform !== 'darwin') return undefined;
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${process.platform}-${process.arch}@${zapierCliNode}`;
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, timeout: timeoutMs, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (err) => resolve({ code: null, stdout, stderr: String(err) }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const tail = (ran: Ran) => `${ran.stderr}${ran.stdout}`.trim().slice(-300);

/** This Node.js when it is 22 or newer, else the cached or freshly fetched Node.js 22. */
export async function findNode22(): Promise<Node22> {
  if (Number(process.versions.node.split('.')[0]) >= 22) return { path: process.execPath };
  const binary = join(cacheDir, 'node');
  if (existsSync(binary)) return { path: binary };
  const pkg = binaryPackage();
  if (!pkg) return { reason: `no Node.js 22 package for ${process.platform}-${process.arch}` };

  mkdirSync(cacheDir, { recursive: true });
  const work = mkdtempSync(join(cacheDir, 'fetch-'));
  try {
    const packed = await run('npm', ['pack', pkg, '--silent', '--pack-destination', work], work, 180_000);
    const tarball = packed.stdout.trim().split('\n').pop() ?? '';
    if (packed.code !== 0 || !tarball.endsWith('.tgz')) return { reason: `npm pack ${pkg} failed: ${tail(packed)}` };
    const unpacked = await run('tar', ['-xzf', join(work, tarball), '-C', work, 'package/bin/node'], work, 120_000);
    if (unpacked.code !== 0) return { reason: `unpacking ${tarball} failed: ${tail(unpacked)}` };
    chmodSync(join(work, 'package', 'bin', 'node'), 0o755);
    renameSync(join(work, 'package', 'bin', 'node'), binary);
    return { path: binary };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
