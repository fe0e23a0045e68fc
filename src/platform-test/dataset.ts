import { randomUUID } from 'node:crypto';

/**
 * The catalog every platform app is tested against (`npm run test:platforms`): one account whose
 * key sees 260 devices (more than two pages of any dropdown or device list of 100), three menus
 * whose group lists differ, one of them with 120 groups (a second dropdown page), and a second
 * account the key must never see. Timestamps are relative, so the devices are online when the
 * connector starts; the control server moves them (control.ts).
 */

export const platformKey = 'sk_platform_test_all_scopes_0123456789';
export const otherAccountKey = 'sk_platform_test_other_account_012345';
export const deviceCount = 260;

const mac = (n: number) => `02:00:00:00:${String(Math.floor(n / 256).toString(16)).padStart(2, '0')}:${(n % 256).toString(16).padStart(2, '0')}`.toUpperCase();

function device(n: number, userId: string) {
  return {
    id: mac(n),
    name: `Screen ${String(n).padStart(3, '0')}`,
    timezone: 'Europe/Berlin',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: `2025-01-01T00:00:${String(n % 60).padStart(2, '0')}.${String(n).padStart(6, '0')}Z`,
    published_at: 'now-2h',
    last_heartbeat_at: 'now',
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'wifi',
    wifi_ssid: 'PlatformTest',
    wifi_signal_strength: -50,
    updated_at: 'now-1h',
    created_at: '2025-01-01T00:00:00.000000Z',
    access: [{ user_id: userId, level: 'read' }],
  };
}

const group = (name: string, tags: string[], groups: unknown[] = [], items: unknown[] = []) => ({
  id: randomUUID(),
  name,
  description: null,
  tags,
  groups,
  items,
});

const item = (name: string, price: number) => ({ id: randomUUID(), name, description: null, price, calories: null, tags: [], inStock: true, items: [] });

export function platformDataset() {
  return {
    accounts: [
      { id: 'acc_platform', name: 'Platform Test Co' },
      { id: 'acc_other', name: 'Other Co' },
    ],
    users: [
      { id: 'usr_platform', account_id: 'acc_platform', name: 'Pat Form' },
      { id: 'usr_other', account_id: 'acc_other', name: 'Otto Other' },
    ],
    api_keys: [
      { id: 'key_platform', user_id: 'usr_platform', name: 'Platform tests', key: platformKey, scopes: ['device:read', 'menu:read', 'hooks:write'] },
      { id: 'key_other', user_id: 'usr_other', name: 'Other account', key: otherAccountKey, scopes: ['device:read', 'menu:read', 'hooks:write'] },
    ],
    devices: [
      ...Array.from({ length: deviceCount }, (_, i) => device(i + 1, 'usr_platform')),
      ...Array.from({ length: 5 }, (_, i) => device(1000 + i, 'usr_other')),
    ],
    menus: [
      {
        id: randomUUID(),
        account_id: 'acc_platform',
        name: 'Breakfast',
        description: 'Until 11am',
        tags: ['daypart:morning'],
        groups: [
          group('Hot drinks', ['temperature:hot'], [group('Coffee', ['caffeine'], [], [item('Latte', 4.25), item('Espresso', 2.5)])]),
          group('Pastries', ['bakery'], [], [item('Croissant', 3)]),
        ],
      },
      {
        id: randomUUID(),
        account_id: 'acc_platform',
        name: 'Lunch',
        description: null,
        tags: [],
        groups: [group('Soups', ['temperature:hot'], [], [item('Tomato soup', 5)]), group('Salads', ['temperature:cold'])],
      },
      {
        id: randomUUID(),
        account_id: 'acc_platform',
        name: 'Catalogue',
        description: 'Many groups: the groups dropdown has a second page',
        tags: [],
        groups: Array.from({ length: 120 }, (_, i) => group(`Shelf ${String(i + 1).padStart(3, '0')}`, i % 2 ? ['odd'] : ['even'])),
      },
      {
        id: randomUUID(),
        account_id: 'acc_other',
        name: 'Not yours',
        description: null,
        tags: [],
        groups: [group('Hidden', [])],
      },
    ],
  };
}
