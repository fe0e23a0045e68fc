import { AppError } from '../errors.js';
import type { DeviceSource, MenuSource, Principal } from './types.js';

/** Upstream mode: asking the upstream whether it knows a key, and whether the key may read devices. */
export interface KeyConfirmation {
  /** Asks the upstream whether it accepts a key (throws its 401); a 403 still means it knows the key. */
  confirmKey(principal: Principal): Promise<void>;
  /**
   * Asks the device upstream whether the key may read devices (cached like any device read),
   * before the connector serves its own state (events, hooks) to that key. An embedded key
   * (whose scopes are known here) needs no question.
   */
  confirmDeviceKey(principal: Principal): Promise<void>;
}

/** Both questions, asked through the cached sources routes use (the menu area first when it is upstream). */
export function keyConfirmation(devices: DeviceSource, menus: MenuSource): KeyConfirmation {
  const smallestDeviceRead = (principal: Principal) => devices.list(principal, { page: 1, pageSize: 1 });
  return {
    async confirmKey(principal) {
      try {
        if (menus.mode === 'upstream') await menus.listMenus(principal);
        else await smallestDeviceRead(principal);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'invalid_scopes')) throw err;
      }
    },
    async confirmDeviceKey(principal) {
      if (principal.scopes === null) await smallestDeviceRead(principal);
    },
  };
}
