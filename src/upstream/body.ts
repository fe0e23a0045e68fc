/** An upstream answer longer than the limit: final, since the same call would get it again. */
export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body over ${limit} bytes`);
    this.name = 'BodyTooLargeError';
  }
}

export interface Body {
  text: string;
  /** Bytes read (after any content decoding), what caches are sized by. */
  bytes: number;
}

/**
 * Reads a fetch body as UTF-8 text, never holding more than `limit` bytes: a declared
 * Content-Length over the limit is refused before reading, and a streamed (chunked or
 * compressed) body is cancelled as soon as it passes the limit, so the upstream stops
 * sending. Throws BodyTooLargeError; timeouts and network errors surface as fetch's own.
 */
export async function readLimited(response: Response, limit: number): Promise<Body> {
  const declared = Number(response.headers.get('content-length') ?? 0);
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw new BodyTooLargeError(limit);
  }
  if (!response.body) return { text: '', bytes: 0 };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  return { text: Buffer.concat(chunks, bytes).toString('utf8'), bytes };
}

/** Drops a body unread (the answer's status is all that matters), without waiting for it. */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}
