import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parseArgs } from 'node:util';
import { platformNames, type Platform } from '../export/platforms.js';
import { projectRoot } from '../paths.js';
import { startConnector } from '../platform-test/connector.js';
import { startControl } from '../platform-test/control.js';
import { platformKey, otherAccountKey, deviceCount } from '../platform-test/dataset.js';

/**
 * `npm run test:platforms [-- <platform>...]`: for every platform (or the ones named), exports
 * its app into the cache folder, installs it (`npm install`; the folder and its node_modules are
 * kept, so a second run is quick), starts a fresh live connector and its test control, and runs
 * the app's own `npm test` against them. Exits 1 when any platform failed.
 *
 * The app's tests get: CONNECTOR_BASE_URL, CONNECTOR_API_KEY (a key with every scope that sees
 * PLATFORM_TEST_DEVICE_COUNT devices), CONNECTOR_OTHER_API_KEY (another account's key),
 * CONNECTOR_CONTROL_URL (src/platform-test/control.ts) and PLATFORM_CACHE_DIR (where a platform
 * that installs its own runtime, such as n8n, keeps it).
 */
const { values, positionals } = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  console.log(`Usage: npm run test:platforms [-- <platform>...]   (platforms: ${platformNames.join(', ')})`);
  process.exit(0);
}
const unknown = positionals.find((name) => !(platformNames as string[]).includes(name));
if (unknown) {
  console.error(`Unknown platform "${unknown}" (one of: ${platformNames.join(', ')}).`);
  process.exit(1);
}
const chosen = (positionals.length > 0 ? positionals : platformNames) as Platform[];
const cacheDir = process.env.PLATFORM_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'signage-connector', 'platforms');
mkdirSync(cacheDir, { recursive: true });

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const results: Array<{ platform: Platform; ok: boolean; detail: string }> = [];

for (const platform of chosen) {
  const started = Date.now();
  const appDir = join(cacheDir, 'apps', platform);
  console.log(`\n=== ${platform}: export to ${appDir}`);
  const step = async (what: string, command: string, args: string[], cwd: string, env?: Record<string, string>) => {
    const code = await run(command, args, cwd, env);
    if (code !== 0) throw new Error(`${what} exited with ${code}`);
  };
  try {
    await step('export', process.execPath, [join(projectRoot, 'dist', 'src', 'cli', 'export.js'), platform, '--out', appDir], projectRoot);
    const installStarted = Date.now();
    await step('npm install', 'npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], appDir);
    console.log(`=== ${platform}: installed in ${seconds(installStarted)}`);
    // Zapier's own CLI (on the Node.js 22 the app installs as `node`, first on the PATH as in
    // its npm scripts) validates the app, then runs its tests the way `zapier push` users do.
    const appPath = `${join(appDir, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}`;
    const zapierCli = join(appDir, 'node_modules', '.bin', 'zapier-platform');
    const offline = { PATH: appPath, DISABLE_ZAPIER_ANALYTICS: '1', NO_UPDATE_NOTIFIER: '1' };
    if (platform === 'zapier') await step('zapier-platform validate', zapierCli, ['validate', '--without-style'], appDir, offline);
    const connector = await startConnector();
    const control = await startControl(connector.databasePath);
    try {
      const [what, command, args] = platform === 'zapier' ? ['zapier-platform test', zapierCli, ['test', '--skip-validate']] : ['npm test', 'npm', ['test']];
      await step(what, command, args, appDir, {
        ...(platform === 'zapier' ? offline : {}),
        CONNECTOR_BASE_URL: connector.baseUrl,
        CONNECTOR_API_KEY: platformKey,
        CONNECTOR_OTHER_API_KEY: otherAccountKey,
        CONNECTOR_CONTROL_URL: control.url,
        PLATFORM_TEST_DEVICE_COUNT: String(deviceCount),
        PLATFORM_CACHE_DIR: cacheDir,
        // Where a test subscription that receives nothing may point (the Zapier app's hook
        // test): on this machine, as public names may not resolve where the tests run.
        TEST_TARGET_URL: `${control.url}/hook-target`,
      });
    } finally {
      await control.stop();
      await connector.stop();
    }
    results.push({ platform, ok: true, detail: seconds(started) });
  } catch (err) {
    results.push({ platform, ok: false, detail: `${(err as Error).message} after ${seconds(started)}` });
  }
}

console.log('\nPlatform apps:');
for (const result of results) console.log(`  ${result.ok ? '✔' : '✘'} ${result.platform.padEnd(13)} ${result.detail}`);
process.exit(results.every((result) => result.ok) ? 0 : 1);
