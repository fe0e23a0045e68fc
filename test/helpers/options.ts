import { expect } from '@jest/globals';
import type { Response } from 'supertest';
import type { RenderedOptions } from '../../src/options/option-list.js';

/**
 * An option page answered over HTTP is the in-memory rendering to the byte: body, ETag,
 * X-Total-Count and the `Link` to the next page (docs/options.md, "Big accounts").
 */
export function expectSameOptions(res: Response, want: RenderedOptions): void {
  expect(res.text).toBe(want.body.toString());
  expect(res.headers.etag).toBe(want.etag);
  expect(res.headers['x-total-count']).toBe(String(want.total));
  const link = res.headers.link as string | undefined;
  if (want.nextCursor === null) expect(link).toBeUndefined();
  else expect(link).toMatch(new RegExp(`[?&]cursor=${want.nextCursor}[&>]`));
}
