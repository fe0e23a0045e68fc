/**
 * What `npm run bench` prints and writes, from the lines the rows return: one markdown table
 * whose lines show each figure beside its target and ✔ (met) or ✘ (missed), the verdict of the
 * run, and the same lines as JSON figures. Rows mark a target met or missed with ✅ / ❌ in their
 * target text; this is the one place that turns that into the table's verdict column.
 */

export type Verdict = 'met' | 'missed';

/** One line of the table, with the name of the row (`npm run bench -- <name>`) it belongs to. */
export interface ReportLine {
  name: string;
  benchmark: string;
  result: string;
  target: string;
  command: string;
}

export interface JsonLine {
  row: string;
  benchmark: string;
  result: string;
  target: string;
  /** null: a context line (a figure shown beside a target, with none of its own). */
  verdict: Verdict | null;
  command: string;
}

export interface Report {
  table: string;
  /** Printed below the table: the full text of every cell the table had to cut. */
  notes: string[];
  json: JsonLine[];
  /** Every row that has a line with a target and none missed, and no row failed to run. */
  passed: boolean;
  /** Rows that missed a target, failed to run, or printed no target. */
  missed: string[];
}

/** Longest table line (the header and separator included). */
export const maxLineLength = 200;

/** Widest each cell may be; the rest of a longer cell goes below the table. */
const widths = { command: 36, benchmark: 49, result: 52, target: 30 } as const;

export function verdictOf(target: string): Verdict | null {
  if (target.includes('❌')) return 'missed';
  return target.includes('✅') ? 'met' : null;
}

/** The target text without its ✅/❌ marks and their "met" / "not met" words. */
function bareTarget(target: string): string {
  const text = target.replace(/\s*(?:—\s*)?(?:✅|❌)(?:\s*(?:not met|met))?/g, '').trim();
  return text.replace(/^—\s*/, '').replace(/\s*—$/, '').trim() || '—';
}

const escapeCell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function benchReport(lines: readonly ReportLine[], run: { erroredRows: string[] }): Report {
  const notes: string[] = [];
  const cut = (text: string, width: number): string => {
    const cell = escapeCell(text);
    if (cell.length <= width) return cell;
    notes.push(`[${notes.length + 1}] ${text}`);
    const mark = ` … [${notes.length}]`;
    const room = width - mark.length;
    const head = cell.slice(0, room);
    const space = head.lastIndexOf(' ');
    let kept = space > room / 2 ? head.slice(0, space) : head;
    // Close a code span the cut left open, or the rest of the line renders as code.
    if ((kept.match(/`/g) ?? []).length % 2 === 1) kept += '`';
    return `${kept}${mark}`;
  };
  const json = lines.map((line) => ({
    row: line.name,
    benchmark: line.benchmark,
    result: line.result,
    target: bareTarget(line.target),
    verdict: verdictOf(line.target),
    command: line.command.replace(/`/g, ''),
  }));
  // The command names the row (`npm run bench -- <name>`), so it comes first.
  const header = ['reproduce', 'benchmark', 'result', 'target', '✔/✘'];
  const table = [header, header.map(() => '---')];
  for (const line of json) {
    const mark = line.verdict === 'met' ? '✔' : line.verdict === 'missed' ? '✘' : '';
    table.push([
      cut(`\`${line.command}\``, widths.command),
      cut(line.benchmark, widths.benchmark),
      cut(line.result, widths.result),
      cut(line.target, widths.target),
      mark,
    ]);
  }
  const names = [...new Set([...lines.map((l) => l.name), ...run.erroredRows])];
  const missed = names.filter((name) => {
    if (run.erroredRows.includes(name)) return true;
    const verdicts = json.filter((l) => l.row === name).map((l) => l.verdict);
    return verdicts.includes('missed') || !verdicts.some((v) => v === 'met');
  });
  return {
    table: table.map((cells) => `| ${cells.join(' | ')} |`).join('\n'),
    notes,
    json,
    passed: missed.length === 0,
    missed,
  };
}
