import { createHash, type Hash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { slice } from './cooperative.js';
import type { OptionEntry, RenderedOptions } from './option-list.js';

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

/** How a format lists one entry. */
function itemOf(format: OptionFormat): (e: OptionEntry) => unknown {
  switch (format) {
    case 'objects':
      return (e) => ({ label: e.label, value: e.value });
    case 'n8n':
      return (e) => ({ name: e.label, value: e.value });
    case 'tree':
      return (e) => [e.treeLabel, e.value, null, e.hasChildren];
    default:
      return (e) => [e.label, e.value];
  }
}

function body(format: OptionFormat, page: readonly OptionEntry[], nextCursor: string | null): unknown {
  const items = page.map(itemOf(format));
  if (format !== 'n8n') return items;
  return nextCursor ? { results: items, paginationToken: nextCursor } : { results: items };
}

/** What `body` puts around its items, as JSON text: `[` `]`, or n8n's object. */
function frame(format: OptionFormat, nextCursor: string | null): [string, string] {
  if (format !== 'n8n') return ['[', ']'];
  return ['{"results":[', nextCursor ? `],"paginationToken":${JSON.stringify(nextCursor)}}` : ']}'];
}

/** A strong ETag: the start of the body's SHA-256. */
function tag(hash: Hash): string {
  return `"${hash.digest('base64url').slice(0, 32)}"`;
}

/** Where the page of a query ends among `total` matches. */
export function pageEnd(query: OptionQuery, total: number): number {
  return query.limit === undefined ? total : Math.min(total, query.offset + query.limit);
}

/**
 * One page's answer: body bytes, a strong ETag over them, the match count and the next cursor.
 * A page of up to one slice (2,000 entries, the warm dropdown) is rendered at once; a bigger
 * one (a whole list of 100,000 devices, without `limit`) a slice at a time, yielding to the
 * event loop between slices, the hash updated as the bytes come: the same bytes and tag.
 */
export async function renderPage(query: OptionQuery, page: readonly OptionEntry[], total: number): Promise<RenderedOptions> {
  const end = pageEnd(query, total);
  const nextCursor = end < total ? encodeCursor(end) : null;
  if (page.length <= slice) {
    const bytes = Buffer.from(JSON.stringify(body(query.format, page, nextCursor)));
    return { body: bytes, etag: tag(createHash('sha256').update(bytes)), total, nextCursor };
  }
  const item = itemOf(query.format);
  const [open, close] = frame(query.format, nextCursor);
  const hash = createHash('sha256');
  const chunks: Buffer[] = [];
  let length = 0;
  const add = (text: string) => {
    const chunk = Buffer.from(text);
    hash.update(chunk);
    chunks.push(chunk);
    length += chunk.length;
  };
  add(open);
  for (let start = 0; start < page.length; start += slice) {
    if (start > 0) await setImmediate();
    // A slice's items without their brackets; JSON puts a comma between two items.
    const json = JSON.stringify(page.slice(start, start + slice).map(item));
    add(start > 0 ? `,${json.slice(1, -1)}` : json.slice(1, -1));
  }
  add(close);
  return { body: Buffer.concat(chunks, length), etag: tag(hash), total, nextCursor };
}

/** RFC 9110 If-None-Match (weak comparison): `*` or any listed tag equal to ours. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
