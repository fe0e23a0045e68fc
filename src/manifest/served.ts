import { manifestJsonSchema } from './json-schema.js';
import type { Manifest } from './schema.js';

/** Where this service serves the manifest's JSON Schema (`GET /v1/manifest` links it). */
export const manifestSchemaPath = '/v1/manifest/schema';

/**
 * The manifest as served by `GET /v1/manifest`: the parsed manifest (defaults filled in) with
 * `baseUrl`, the absolute URL every declared `path` is relative to, and a `$schema` that
 * resolves on this service. It validates against that schema: `baseUrl` is a field of the
 * schema, and nothing else is added.
 */
export function servedManifest(manifest: Manifest, baseUrl: string): Manifest {
  return { ...manifest, $schema: `${baseUrl}${manifestSchemaPath}`, baseUrl };
}

/** The manifest's JSON Schema as served at `manifestSchemaPath`: its `$id` is where it is served. */
export function servedManifestSchema(baseUrl: string): Record<string, unknown> {
  generated ??= manifestJsonSchema();
  return { ...generated, $id: `${baseUrl}${manifestSchemaPath}` };
}

let generated: Record<string, unknown> | undefined;
