import { z } from 'zod';

/**
 * Record-level tolerance for upstream answers (docs/upstream.md, "Invalid records"): in a list,
 * one record that does not match the interface (a device with an impossible timestamp, a group
 * with a missing field) is left out of the answer instead of turning the whole answer into a
 * 502. What was left out is collected while the answer is parsed and reported by the client
 * (a `warn` line with the record's id and field, and a metric), once per upstream answer.
 */
export interface RejectedRecord {
  /** `device`, `group` or `menu`. */
  resource: string;
  /** The record's `id` when it has a usable one. */
  id: string | null;
  /** The first field that did not match, as a dotted path inside the record. */
  field: string;
  message: string;
}

/** The records left out by the parse in progress (zod parses synchronously, so one is enough). */
let collecting: RejectedRecord[] | null = null;

/** Runs a synchronous parse and returns what it left out beside its result. */
export function collectRejected<T>(parse: () => T): { result: T; rejected: RejectedRecord[] } {
  const outer = collecting;
  const rejected: RejectedRecord[] = [];
  collecting = rejected;
  try {
    return { result: parse(), rejected };
  } finally {
    collecting = outer;
  }
}

function idOf(raw: unknown): string | null {
  const id = raw !== null && typeof raw === 'object' ? (raw as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id.length > 0 && id.length <= 200 ? id : null;
}

/** What a tolerant list kept, and the ids of the records it left out (those with a usable id). */
export interface Tolerated<T> {
  kept: T[];
  leftOutIds: string[];
}

/** Keeps the elements of `raws` that match `record`; the rest are collected for the client to report. */
export function tolerate<T>(record: z.ZodType<T, unknown>, resource: string, raws: readonly unknown[]): Tolerated<T> {
  const kept: T[] = [];
  const leftOutIds: string[] = [];
  for (const raw of raws) {
    const parsed = record.safeParse(raw);
    if (parsed.success) {
      kept.push(parsed.data);
      continue;
    }
    const issue = parsed.error.issues[0]!;
    const id = idOf(raw);
    if (id !== null) leftOutIds.push(id);
    collecting?.push({ resource, id, field: issue.path.join('.') || '(record)', message: issue.message });
  }
  return { kept, leftOutIds };
}

/**
 * An array whose invalid elements are left out (and collected) rather than failing the parse.
 * Anything that is not an array still fails.
 */
export function tolerantArray<T>(record: z.ZodType<T, unknown>, resource: string): z.ZodType<T[], unknown> {
  return z.array(z.unknown()).transform((raws) => tolerate(record, resource, raws).kept);
}
