import { ExportError } from '../shared/export-error.js';
import type { Manifest } from '../../manifest/schema.js';

/**
 * The names a Make app gives its components, all derived from manifest ids so that a re-export
 * keeps scenarios working. Make allows only letters and digits in module and RPC names (3–64,
 * starting with a letter), so `get_device` becomes the module `getDevice`; connection and
 * webhook names (local ids; Make names them itself) may also hold dashes.
 */

/** A manifest or base URL the Make exporter cannot express; the export CLI prints its message. */
export class MakeExportError extends ExportError {}

const moduleOrRpcName = /^[a-zA-Z][0-9a-zA-Z]{2,63}$/;
const connectionOrWebhookName = /^[a-zA-Z][0-9a-zA-Z-]{1,33}[0-9a-zA-Z]$/;

/** `get_device` → `getDevice`. */
export function camelCase(id: string): string {
  return id.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/** `device_offline` → `device-offline`; `Signage Connector` → `signage-connector`. */
export function kebabCase(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function checked(name: string, rule: RegExp, what: string, from: string): string {
  if (!rule.test(name)) throw new MakeExportError(`Make would not accept ${what} name "${name}" (from "${from}"): ${rule.source}`);
  return name;
}

export const rpcName = (sourceId: string) => checked(camelCase(sourceId), moduleOrRpcName, 'the RPC', sourceId);
export const searchModuleName = (operationId: string) => checked(camelCase(operationId), moduleOrRpcName, 'the module', operationId);
export const instantTriggerName = (triggerId: string) => checked(camelCase(triggerId), moduleOrRpcName, 'the module', triggerId);
export const pollingTriggerName = (triggerId: string) => checked(`${camelCase(triggerId)}Polling`, moduleOrRpcName, 'the module', triggerId);
export const webhookName = (triggerId: string) => checked(kebabCase(triggerId), connectionOrWebhookName, 'the webhook', triggerId);
export const connectionName = (manifest: Manifest) =>
  checked((kebabCase(manifest.name) || 'connector').slice(0, 35).replace(/-+$/, ''), connectionOrWebhookName, 'the connection', manifest.name);

/** Every component name of the app, checked for clashes (two ids that camel-case alike). */
export function checkUnique(names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new MakeExportError(`two Make components would both be called ${name}; rename one of the manifest ids`);
    seen.add(name);
  }
}
