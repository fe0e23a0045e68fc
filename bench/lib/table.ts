/**
 * One line of a row's output. The table itself is printed by report.ts, which names each line
 * by its row and turns the ✅ / ❌ a row puts in `target` into the ✔ / ✘ verdict column.
 */
export interface TableRow {
  /** The row's number in the README's benchmark table (not printed: the table names rows). */
  row: number;
  benchmark: string;
  result: string;
  /** The target, with ✅ when this run met it and ❌ when it missed; neither: a context line. */
  target: string;
  command: string;
}
