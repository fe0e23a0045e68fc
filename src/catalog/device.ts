import { z } from 'zod';
import { component, count, timestamp } from './registry.js';

/** A device of the device area (docs/devices.md): every field present, the nullable ones null. */
export const Device = component(
  'Device',
  z.strictObject({
    id: z.string().describe('Upper case in list output, lower case in single-device output and events.'),
    name: z.string(),
    timezone: z.string().describe('`<Area>/<Location>`.'),
    screen_resolution: z.string().describe('`<width>x<height>`.'),
    screen_orientation: z.string(),
    registered_at: timestamp,
    published_at: timestamp.nullable(),
    last_heartbeat_at: timestamp.nullable().describe('null = never sent one (and offline).'),
    is_online: z.boolean().describe('The last heartbeat is younger than `HEARTBEAT_TIMEOUT_MS` (5 minutes by default).'),
    offline_startup: z.boolean(),
    offline_startup_delay_minutes: z.number().int(),
    open_dev_tools: z.boolean(),
    display_connected: z.boolean(),
    connection_type: z.string(),
    wifi_ssid: z.string().nullable(),
    wifi_signal_strength: z.number().int().nullable(),
    updated_at: timestamp,
    created_at: timestamp,
  }),
);

export const DevicePage = component(
  'DevicePage',
  z.strictObject({
    total: count.describe('Every matching device, not just this page.'),
    data: z.array(Device),
  }),
);

/**
 * A device as the rest of the app sees it, whichever source serves it. `id` is lower case here;
 * the device-list route prints it upper case.
 */
export type Device = z.infer<typeof Device>;

/** What a device's status is decided from: its id and heartbeat, and whether it is online. */
export type DeviceState = Pick<Device, 'id' | 'last_heartbeat_at' | 'is_online'>;
