import { createHash } from 'node:crypto';

/**
 * What makes two subscriptions the same hook (docs/webhooks.md): the key, the URL, and the
 * normalised (sorted, de-duplicated JSON) event types and device ids. Stored hashed, under a
 * unique index, so two identical subscriptions racing on two replicas make one hook.
 */
export function hookIdentity(keyHash: string, targetUrl: string, events: string, deviceIds: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([keyHash, targetUrl, events, deviceIds]))
    .digest('hex');
}

/** The origin deliveries to a URL are throttled by; never a path or query, which may hold secrets. */
export function targetOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}
