import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp } from '../helpers/app.js';
import { projectRoot } from '../../src/paths.js';

// The served OpenAPI document passes two independent linters with the committed rulesets:
// Redocly's `recommended` (.redocly.yaml) and Spectral's `spectral:oas` (.spectral.yaml).
// Warnings are allowed; errors are not.

const bin = (name: string) => join(projectRoot, 'node_modules', '.bin', name);
// No telemetry or update checks from the linters: tests stay on loopback.
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1', NO_COLOR: '1' };

let dir: string;
let file: string;

beforeAll(async () => {
  const t = await buildTestApp();
  try {
    const doc = (await request(t.app).get('/openapi.json').expect(200)).body as unknown;
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
  } finally {
    await t.close();
  }
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
});

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: projectRoot, env, timeout: 25_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

test('redocly lint (recommended) and spectral lint (spectral:oas) report no errors', async () => {
  const [redocly, spectral] = await Promise.all([
    run(bin('redocly'), ['lint', '--config', '.redocly.yaml', '--format', 'json', file]),
    run(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', '--quiet', file]),
  ]);

  const redoclyReport = JSON.parse(redocly.stdout) as { totals: { errors: number }; problems: Array<{ ruleId: string; severity: string; message: string }> };
  const redoclyErrors = redoclyReport.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`);
  expect(redoclyErrors).toEqual([]);
  expect([redoclyReport.totals.errors, redocly.code]).toEqual([0, 0]);

  const spectralReport = JSON.parse(spectral.stdout || '[]') as Array<{ code: string; severity: number; message: string; path: string[] }>;
  // Spectral's severities: 0 error, 1 warning, 2 info, 3 hint.
  const spectralErrors = spectralReport.filter((p) => p.severity === 0).map((p) => `${p.code}: ${p.message} at ${p.path.join('.')}`);
  expect(spectralErrors).toEqual([]);
  expect(spectral.code).toBe(0);
}, 30_000);
