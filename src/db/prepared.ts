import { createHash } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';

/** What starts the text of a statement `prepared` marked. */
const mark = '/* prepared */';

/**
 * PostgreSQL: `statement` kept prepared on each pooled connection under a name of its text (the
 * pooled driver, pg-budget.ts, sends it named), so a connection parses, analyses and plans its
 * text once and later runs it from its cached plan: after five runs PostgreSQL plans it once for
 * any parameters (a generic plan) when that costs no more than planning each run. For the poll's
 * record, one statement of a dozen parts, that was half of its server time (1.9–2.5 ms instead of
 * 3.6–4.4 ms; docs/benchmarks.md). Only for statements of a few fixed texts (each text is one
 * more prepared statement on every connection) whose plan suits any parameters, and whose result
 * columns are named rather than a table's `*`: a prepared `SELECT t.*` fails ("cached plan must not
 * change result type") on a replica still running while another one's migration adds a column to
 * `t` (a rolling deploy). SQLite keeps every statement prepared by its text already, and a mark is
 * a comment to it.
 */
export function prepared<T>(statement: RawBuilder<T>): RawBuilder<T> {
  return sql<T>`${sql.raw(mark)} ${statement}`;
}

/** The name a statement of `text` is prepared under, or undefined when `prepared` did not mark it. */
export function preparedName(text: string): string | undefined {
  return text.startsWith(mark) ? `p_${createHash('sha1').update(text).digest('hex')}` : undefined;
}
