import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { Clock } from './time/timestamps.js';
import type { DeviceSource, MenuSource } from './sources/types.js';
import { embeddedKeyVerifier, type KeyVerifier } from './auth/embedded-keys.js';
import { FailedAttempts } from './auth/failed-attempts.js';
import { embeddedDeviceSource } from './sources/embedded-devices.js';
import { embeddedMenuSource } from './sources/embedded-menus.js';

/** Everything routes need, built once and handed to `createApp`. */
export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
  devices: DeviceSource;
  menus: MenuSource;
  /** Key verification per area: embedded looks keys up, upstream asks the upstream. */
  keys: { device: KeyVerifier; menu: KeyVerifier };
  failedAttempts: FailedAttempts;
  /** Named checks for `/readyz`: `ok` or what is wrong. */
  readiness(): Promise<Record<string, string>>;
  /** Stops background work; the caller closes the database afterwards. */
  close(): Promise<void>;
}

export interface ServiceDeps {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
}

/** The composition root. */
export function buildServices({ config, logger, clock, db }: ServiceDeps): Services {
  const verify = embeddedKeyVerifier(db);
  const ping = db.prepare('SELECT 1').pluck();
  return {
    config,
    logger,
    clock,
    db,
    devices: embeddedDeviceSource(db, clock, config.HEARTBEAT_TIMEOUT_MS),
    menus: embeddedMenuSource(db),
    keys: { device: verify, menu: verify },
    failedAttempts: new FailedAttempts(clock),
    async readiness() {
      try {
        ping.get();
        return { database: 'ok' };
      } catch (err) {
        return { database: (err as Error).message };
      }
    },
    async close() {},
  };
}
