/**
 * What an exporter throws for a manifest or base URL its platform cannot express; the export
 * CLI prints its message and exits 1. Each platform's own error class extends it.
 */
export class ExportError extends Error {}

/** The base URL an app is exported with: http(s), no query, fragment or credentials; no trailing slash. */
export function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ExportError(`base URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ExportError(`base URL ${raw} must be http:// or https://`);
  if (url.search || url.hash || url.username || url.password) throw new ExportError(`base URL ${raw} must not have a query, fragment or credentials`);
  return url.toString().replace(/\/+$/, '');
}

/** An npm-safe slug of the connector's name (`Signage Connector` → `signage-connector`). */
export function packageSlug(name: string): string {
  const slugged = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return slugged || 'connector';
}
