import { describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import request from 'supertest';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp } from '../helpers/app.js';

// The documentation a newcomer reads in a fresh clone: every relative link must land on a
// file of the repository (and on a heading there, when it names one), nothing may send the
// reader outside the clone or use words that only make sense inside the team, and the
// service's own reference page names the guides.

function markdownUnder(dir: string): string[] {
  return readdirSync(join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const documents = ['README.md', ...markdownUnder('docs')];
/** Also user-facing: the README of the exported Zapier app. */
const userFacing = [
  ...documents,
  ...['zapier', 'n8n', 'activepieces', 'pipedream', 'make']
    .map((platform) => `src/export/${platform}/template/README.md`)
    .filter((path) => existsSync(join(projectRoot, path))),
];

const read = (path: string) => readFileSync(join(projectRoot, path), 'utf8');

/** The text outside fenced code blocks and inline code, where links live. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** `[text](target)` and `[label]: target` links. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const references = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!);
  return [...inline, ...references];
}

/** Heading anchors the way GitHub makes them: lower case, punctuation dropped, spaces → `-`, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  for (const [, heading] of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

describe('the documentation of a fresh clone', () => {
  test('README.md and docs/ are there and link to each other', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/configuration.md', 'docs/datasets.md', 'docs/zapier.md']));
    const readmeTargets = linkTargets(read('README.md'));
    for (const doc of documents.filter((path) => path !== 'README.md')) expect(readmeTargets).toContain(doc);
  });

  test.each(documents)('every relative link in %s resolves to a file (and heading) in the repository', (path) => {
    const problems: string[] = [];
    for (const target of linkTargets(read(path))) {
      if (isExternal(target)) continue;
      const [file = '', anchor] = target.split('#');
      const resolved = file === '' ? join(projectRoot, path) : resolve(projectRoot, dirname(path), decodeURI(file));
      const inside = relative(projectRoot, resolved);
      if (inside.startsWith('..') || inside.split(sep).includes('node_modules')) {
        problems.push(`${target}: outside the repository`);
      } else if (!existsSync(resolved)) {
        problems.push(`${target}: no such file`);
      } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(readFileSync(resolved, 'utf8')).has(anchor)) {
        problems.push(`${target}: no heading #${anchor} in ${inside}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test.each(userFacing)('%s does not point into the team folder or use its private vocabulary', (path) => {
    const text = read(path);
    expect(text).not.toContain('../shared');
    expect(text).not.toMatch(/seed/i);
    expect(text).not.toMatch(/CONTRACT\.md/);
  });

  test('docs/configuration.md documents every variable src/config.ts reads', () => {
    const names = [...read('src/config.ts').matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
    expect(names.length).toBeGreaterThanOrEqual(18);
    const documented = read('docs/configuration.md');
    expect(names.filter((name) => !documented.includes(`| \`${name}\` |`))).toEqual([]);
  });

  test('the anchors are computed the way GitHub does', () => {
    expect([...anchors('# Devices\n## `GET /devices/{id}`\n## Where the upstream interface is silent\n## Devices\n')]).toEqual([
      'devices',
      'get-devicesid',
      'where-the-upstream-interface-is-silent',
      'devices-1',
    ]);
  });
});

describe('the reference page', () => {
  test('GET /openapi.json, which /docs renders, names README.md and the guides in docs/, and each exists', async () => {
    const t = await buildTestApp();
    try {
      const doc = await request(t.app).get('/openapi.json').expect(200);
      const named = [...String(doc.body.info.description).matchAll(/`((?:docs\/)?[\w.-]+\.md)`/g)].map((m) => m[1]!);
      expect(named).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'docs/configuration.md', 'docs/zapier.md']));
      for (const path of named) expect(existsSync(join(projectRoot, path))).toBe(true);
      const page = await request(t.app).get('/docs').expect(200);
      expect(page.text).toContain('"url":"/openapi.json"');
    } finally {
      await t.close();
    }
  });
});
