/** Markdown table printing: the one place the output format lives. */

export interface TableRow {
  /** The benchmark row number this line belongs to (several lines may share one). */
  row: number;
  benchmark: string;
  result: string;
  target: string;
  command: string;
}

const escapeCell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');

export function markdownTable(rows: readonly TableRow[]): string {
  const header = ['#', 'benchmark', 'result', 'target', 'reproduce'];
  const lines = [header, header.map(() => '---')];
  for (const r of rows) lines.push([String(r.row), r.benchmark, r.result, r.target, r.command].map(escapeCell));
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
