import type { Manifest } from './schema.js';

/**
 * The manifest as served by `GET /v1/manifest`: `baseUrl` added and every declared `path`
 * (option sources, the auth test, trigger endpoints) given an absolute `url` beside it.
 */
export function absoluteManifest(manifest: Manifest, baseUrl: string): Record<string, unknown> {
  const withUrls = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(withUrls);
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = withUrls(inner);
      if (key === 'path' && typeof inner === 'string' && inner.startsWith('/')) out.url = `${baseUrl}${inner}`;
    }
    return out;
  };
  return { ...(withUrls(manifest) as Record<string, unknown>), baseUrl };
}
