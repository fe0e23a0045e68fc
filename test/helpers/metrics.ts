import { spawnSync } from 'node:child_process';
import type { Express } from 'express';
import request from 'supertest';

/** One sample of a scrape: `name{a="x",b="y"}` → value, labels sorted as prom-client writes them. */
export type Samples = Map<string, number>;

/** Scrapes `/metrics` over HTTP and returns the raw text and its samples. */
export async function scrape(app: Express, token?: string): Promise<{ text: string; samples: Samples }> {
  const req = request(app).get('/metrics');
  if (token) req.set('Authorization', `Bearer ${token}`);
  const res = await req.expect(200);
  return { text: res.text, samples: parseSamples(res.text) };
}

export function parseSamples(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** The value of one series (0 when absent, as Prometheus treats a counter never incremented). */
export function sample(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return samples.get(parts.length ? `${name}{${parts.join(',')}}` : name) ?? 0;
}

/**
 * Runs `promtool check metrics` on a scrape when promtool is installed (Debian package
 * `prometheus`); returns null, with a note on the console, when it is not.
 */
export function promtoolCheck(text: string): { code: number | null; output: string } | null {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 20_000 });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    console.warn('promtool not found on PATH: skipping the `promtool check metrics` assertion (apt-get install prometheus)');
    return null;
  }
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}
