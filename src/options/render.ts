import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { fold, type OptionEntry, type OptionList, type RenderedOptions } from './option-list.js';

export type OptionFormat = 'tuples' | 'objects' | 'n8n' | 'tree';

export interface OptionQuery {
  format: OptionFormat;
  q?: string;
  limit?: number;
  /** Offset decoded from the opaque cursor. */
  offset: number;
  parent?: string;
}

/** Cursors are opaque to clients; inside, an offset into the filtered list. */
export function encodeCursor(offset: number): string {
  return Buffer.from(`o:${offset}`).toString('base64url');
}

export function decodeCursor(cursor: string): number | null {
  const text = Buffer.from(cursor, 'base64url').toString();
  const m = /^o:(\d{1,9})$/.exec(text);
  return m ? Number(m[1]) : null;
}

export function queryKey(query: OptionQuery): string {
  return `${query.format}|${query.q ?? ''}|${query.limit ?? ''}|${query.offset}|${query.parent ?? ''}`;
}

function select(list: OptionList, query: OptionQuery): OptionEntry[] {
  let entries = list.entries;
  if (query.format === 'tree') {
    // Ids compare case-insensitively, as in the group filters and menu paths.
    const wanted = query.parent?.toLowerCase() ?? null;
    const parent = wanted === null ? null : entries.find((e) => e.value.toLowerCase() === wanted)?.value;
    if (parent === undefined) {
      throw new AppError('validation', 'parent must be the id of a group of this menu', [
        { path: 'parent', message: 'parent must be the id of a group of this menu' },
      ]);
    }
    entries = entries.filter((e) => e.parent === parent);
  }
  if (query.q) {
    const needle = fold(query.q);
    entries = entries.filter((e) => (query.format === 'tree' ? fold(e.treeLabel) : e.folded).includes(needle));
  }
  return entries;
}

function body(format: OptionFormat, page: OptionEntry[], nextCursor: string | null): unknown {
  switch (format) {
    case 'objects':
      return page.map((e) => ({ label: e.label, value: e.value }));
    case 'n8n': {
      const results = page.map((e) => ({ name: e.label, value: e.value }));
      return nextCursor ? { results, paginationToken: nextCursor } : { results };
    }
    case 'tree':
      return page.map((e) => [e.treeLabel, e.value, null, e.hasChildren]);
    default:
      return page.map((e) => [e.label, e.value]);
  }
}

/**
 * Renders one page of a list for a query: body bytes, a strong ETag over them, the match
 * count and the next cursor. Memoised on the list, so a warm dropdown costs a map look-up.
 */
export function renderOptions(list: OptionList, query: OptionQuery): RenderedOptions {
  const key = queryKey(query);
  const cached = list.rendered.get(key);
  if (cached) return cached;
  const matches = select(list, query);
  const end = pageEnd(query, matches.length);
  const rendered = renderPage(query, matches.slice(query.offset, end), matches.length);
  list.rendered.set(key, rendered);
  return rendered;
}

/** Where the page of a query ends among `total` matches. */
export function pageEnd(query: OptionQuery, total: number): number {
  return query.limit === undefined ? total : Math.min(total, query.offset + query.limit);
}

/** One page's answer: body bytes, a strong ETag over them, the match count and the next cursor. */
export function renderPage(query: OptionQuery, page: OptionEntry[], total: number): RenderedOptions {
  const end = pageEnd(query, total);
  const nextCursor = end < total ? encodeCursor(end) : null;
  const bytes = Buffer.from(JSON.stringify(body(query.format, page, nextCursor)));
  const etag = `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"`;
  return { body: bytes, etag, total, nextCursor };
}

/** RFC 9110 If-None-Match (weak comparison): `*` or any listed tag equal to ours. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
