import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { benchDeviceRecord } from './devices.js';

/**
 * The dataset of the `scale` row (docs/datasets.md shape), written to a file as it is generated
 * (about 60 MB; never held whole in memory): one big account with 100,000 devices and one menu of
 * 20,000 groups (200 regions × 99 categories, two levels), beside small accounts with 20
 * devices and a 30-group menu each. Every account has one user; the big one has two keys with
 * every scope (`main`, and `search` so a search finds its option lists cold too), each small
 * one a key with every scope. Deterministic: the same bytes every run. Devices are online
 * (heartbeat `now-30s`); the row ages heartbeats to take them offline.
 */

export const scaleDevices = 100_000;
export const scaleRegions = 200;
export const scaleCategoriesPerRegion = 99;
export const scaleGroups = scaleRegions * (1 + scaleCategoriesPerRegion);
export const smallAccounts = 5;
export const smallDevices = 20;
const smallGroups = 30;

export const bigKeys = { main: 'sk_scale_big_main_0123456789abcdef', search: 'sk_scale_big_search_0123456789abc' } as const;
export const bigMenuId = '5ca1e000-0000-4000-8000-000000000001';

export function smallKey(account: number): string {
  return `sk_scale_small_${String(account).padStart(3, '0')}_0123456789ab`;
}

export function smallMenuId(account: number): string {
  return `5ca1e000-0000-4000-8000-1${String(account).padStart(11, '0')}`;
}

/** Device ids: the big account's `02:5c:…`, small account n's `02:5d:nn:…`; lower case. */
export function bigDeviceId(index: number): string {
  const hex = index.toString(16).padStart(8, '0');
  return `02:5c:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

export function smallDeviceId(account: number, index: number): string {
  const hex = ((account << 8) | index).toString(16).padStart(8, '0');
  return `02:5d:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

/** What the row's searches ask for, and how many options each finds. */
export const scaleSearches = {
  devices: { q: 'store 4217', matches: 5 },
  groups: { q: 'category 150.7', matches: 11 },
};

const places = ['Menu board', 'Drive-thru', 'Lobby', 'Counter', 'Window'];
const groupId = (menu: number, serial: number) => `5ca1e000-${String(menu).padStart(4, '0')}-4000-8000-${serial.toString(16).padStart(12, '0')}`;

/** A small file writer that batches strings into few write calls. */
class Out {
  private parts: string[] = [];
  private size = 0;
  constructor(private readonly fd: number) {}
  put(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size > 1 << 20) this.flush();
  }
  flush(): void {
    if (this.parts.length) writeSync(this.fd, this.parts.join(''));
    this.parts = [];
    this.size = 0;
  }
}

/** A JSON array written element by element. */
function array<T>(out: Out, name: string, items: Iterable<T>, render: (item: T) => string, last = false): void {
  out.put(`"${name}":[`);
  let first = true;
  for (const item of items) {
    out.put(first ? render(item) : `,\n${render(item)}`);
    first = false;
  }
  out.put(last ? ']' : '],\n');
}

function* range(n: number): Generator<number> {
  for (let i = 0; i < n; i += 1) yield i;
}

/** Writes the dataset to `file`; returns its size in bytes. */
export function writeScaleDataset(file: string): number {
  const fd = openSync(file, 'w');
  try {
    const out = new Out(fd);
    const small = [...range(smallAccounts)].map((n) => n + 1);
    out.put('{\n');
    array(out, 'accounts', ['big', ...small], (a) =>
      JSON.stringify(a === 'big' ? { id: 'acc_scale_big', name: 'Big Chain' } : { id: `acc_scale_small_${a}`, name: `Small Café ${a}` }),
    );
    array(out, 'users', ['big', ...small], (a) =>
      JSON.stringify({ id: `usr_scale_${a}`, account_id: a === 'big' ? 'acc_scale_big' : `acc_scale_small_${a}`, name: `User ${a}` }),
    );
    const scopes = ['device:read', 'menu:read', 'hooks:write'];
    const keys = [
      { id: 'key_scale_big_main', user_id: 'usr_scale_big', name: 'Big (main)', scopes, key: bigKeys.main },
      { id: 'key_scale_big_search', user_id: 'usr_scale_big', name: 'Big (search)', scopes, key: bigKeys.search },
      ...small.map((a) => ({ id: `key_scale_small_${a}`, user_id: `usr_scale_${a}`, name: `Small ${a}`, scopes, key: smallKey(a) })),
    ];
    array(out, 'api_keys', keys, (k) => JSON.stringify(k));
    const devices = function* (): Generator<string> {
      for (let i = 0; i < scaleDevices; i += 1) {
        yield JSON.stringify(benchDeviceRecord(bigDeviceId(i), `Store ${Math.floor(i / places.length) + 1} ${places[i % places.length]}`, i, 'usr_scale_big'));
      }
      for (const a of small) {
        for (let i = 0; i < smallDevices; i += 1)
          yield JSON.stringify(benchDeviceRecord(smallDeviceId(a, i), `Café ${a} screen ${i + 1}`, i, `usr_scale_${a}`));
      }
    };
    array(out, 'devices', devices(), (d) => d);
    let serial = 0;
    const bigGroups = function* (): Generator<string> {
      for (let r = 1; r <= scaleRegions; r += 1) {
        const children = [...range(scaleCategoriesPerRegion)].map((c) => ({ id: groupId(0, ++serial), name: `Category ${r}.${c + 1}` }));
        yield JSON.stringify({ id: groupId(0, ++serial), name: `Region ${r}`, groups: children });
      }
    };
    out.put('"menus":[');
    out.put(`{"id":"${bigMenuId}","account_id":"acc_scale_big","name":"All stores","description":null,"tags":[],`);
    array(out, 'groups', bigGroups(), (g) => g, true);
    out.put('}');
    for (const a of small) {
      const groups = [...range(smallGroups)].map((g) => ({ id: groupId(a, g + 1), name: `Shelf ${g + 1}` }));
      out.put(`,\n${JSON.stringify({ id: smallMenuId(a), account_id: `acc_scale_small_${a}`, name: `Café ${a} menu`, description: null, tags: [], groups })}`);
    }
    out.put(']\n}\n');
    out.flush();
  } finally {
    closeSync(fd);
  }
  return statSync(file).size;
}
