import type { Manifest } from '../../manifest/schema.js';
import type { TargetPolicy } from '../../webhooks/target-guard.js';
import type { Route } from '../route.js';
import { getDevice, listDevices } from './devices.js';
import { docsPageRoute, getOpenApi } from './docs.js';
import { eventSummary } from './event-summary.js';
import { createHook, deleteHook, getHook, listHooks } from './hooks.js';
import { getHookDelivery, listHookDeliveries, recoverHook, resendHookDelivery, rotateHookSecret, testHook, updateHook } from './hook-operations.js';
import { listGroups, listMenus } from './menus.js';
import { metrics } from './metrics.js';
import { optionRoute } from './options.js';
import { getManifest, getManifestSchema, getMe, health, readiness } from './service.js';
import { listEvents, pollDeviceStatus, sampleDeviceStatus } from './triggers.js';
import { listAccounts, listUsers, queueHealth } from './admin.js';
import { createKey, listKeys, revokeKey, rollKey, updateKey } from './admin-keys.js';

export { docsAssets } from './docs.js';
export { consoleAssets } from './console.js';

/**
 * Every route of the service, in the order the OpenAPI document lists them. The Express app
 * (`http/router.ts`) and the document (`openapi/document.ts`) are both built from this list.
 * A new endpoint is a `defineRoute` in the file of its area, added here.
 */
export function routes(manifest: Manifest, targets: TargetPolicy): Route[] {
  return [
    listDevices,
    getDevice,
    listMenus,
    listGroups,
    // One per option source of the manifest.
    ...manifest.optionSources.map(optionRoute),
    getMe,
    pollDeviceStatus,
    sampleDeviceStatus,
    listEvents,
    eventSummary,
    createHook(targets),
    listHooks,
    getHook,
    updateHook,
    deleteHook,
    listHookDeliveries,
    getHookDelivery,
    resendHookDelivery,
    recoverHook,
    testHook,
    rotateHookSecret,
    health,
    readiness,
    getManifest,
    getManifestSchema,
    metrics,
    getOpenApi,
    docsPageRoute,
    // The operator API (docs/keys.md): 404 unless ADMIN_TOKEN is set.
    listAccounts,
    listUsers,
    listKeys,
    createKey,
    updateKey,
    revokeKey,
    rollKey,
    queueHealth,
  ];
}
