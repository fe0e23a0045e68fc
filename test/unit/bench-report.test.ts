import { expect, test } from '@jest/globals';
import { benchReport, verdictOf, type ReportLine } from '../../bench/lib/report.js';

/**
 * The bench table is honest: every line with a target shows it and ✔ or ✘, a row whose target
 * is missed (or that printed none) fails the run, and the table stays readable (no line over
 * 200 characters; what does not fit goes below the table, in full).
 */

const long = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

const lines: ReportLine[] = [
  {
    name: 'cold-burst',
    benchmark: 'cold burst: 200 concurrent requests',
    result: '**1 upstream call**',
    target: '1 upstream call — ✅ met',
    command: '`npm run bench -- cold-burst`',
  },
  {
    name: 'poller',
    benchmark: `poller, one key with 10,000 devices ${long(30)}`,
    result: `**10 per poll** ${long(60)}`,
    target: '10 — ❌ not met',
    command: '`npm run bench -- poller`',
  },
  { name: 'poller', benchmark: 'poll time', result: 'median 300 ms', target: '— (no target)', command: '`npm run bench -- poller`' },
];

test('✅/❌ in a target become a verdict; a target without either is a context line', () => {
  expect(verdictOf('1 upstream call — ✅ met')).toBe('met');
  expect(verdictOf('≥ 0.5× ✅ · all delivered ❌')).toBe('missed');
  expect(verdictOf('— (no target)')).toBeNull();
});

test('each line shows its target and ✔ or ✘; a missed target fails the run', () => {
  const report = benchReport(lines, { erroredRows: [] });
  const table = report.table.split('\n');
  expect(table.find((l) => l.includes('cold burst'))).toMatch(/\| 1 upstream call \| ✔ \|$/);
  expect(table.find((l) => l.includes('poller, one key'))).toMatch(/\| 10 \| ✘ \|$/);
  expect(report.passed).toBe(false);
  expect(report.missed).toEqual(['poller']);
  expect(report.table).not.toMatch(/CONTRACT|✅|❌/);
});

test('no table line is over 200 characters; what was cut is below the table in full', () => {
  const wide = {
    name: `a-very-long-row-name-${long(3)}`,
    benchmark: long(40),
    result: long(40),
    target: `${long(20)} ✅`,
    command: `\`npm run bench -- ${long(10)}\``,
  };
  const report = benchReport([...lines, wide], { erroredRows: [] });
  for (const line of report.table.split('\n')) expect(line.length).toBeLessThanOrEqual(200);
  const below = report.notes.join('\n');
  expect(below).toContain(long(60));
  expect(below).toContain(long(30));
});

test('all targets met: the run passes; a row that errored or printed no target fails it', () => {
  expect(benchReport([lines[0]!], { erroredRows: [] }).passed).toBe(true);
  expect(benchReport([lines[0]!], { erroredRows: ['webhooks'] })).toMatchObject({ passed: false, missed: ['webhooks'] });
  expect(benchReport([lines[2]!], { erroredRows: [] })).toMatchObject({ passed: false, missed: ['poller'] });
});

test('the JSON figures name each line with its row, result, target and verdict', () => {
  const { json } = benchReport(lines, { erroredRows: [] });
  expect(json[1]).toEqual({
    row: 'poller',
    benchmark: lines[1]!.benchmark,
    result: lines[1]!.result,
    target: '10',
    verdict: 'missed',
    command: 'npm run bench -- poller',
  });
});
