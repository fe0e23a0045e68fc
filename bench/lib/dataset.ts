/**
 * A generated dataset (docs/datasets.md shape): one account, one user, one key with every scope,
 * and one menu of exactly 200 groups nested four levels deep (5 top groups, each with 3
 * children, each with 3, each with 3: 5 × (1 + 3 + 9 + 27) = 200), so the group-path labels
 * (`Drinks 1 › Hot 1.2 › …`) are realistic. Deterministic: the same bytes every run.
 */

export const benchKey = 'sk_bench_0123456789abcdef0123456789';

/** Further keys of the same user (menu:read), for rows that need a second, uncached principal. */
export function extraBenchKey(n: number): string {
  return `sk_bench_extra_${String(n).padStart(4, '0')}_0123456789`;
}
export const benchMenuId = '3f2a9c10-0000-4000-8000-00000000b001';
export const benchGroupCount = 200;

/**
 * Row 1's per-key rate limit (docs/keys.md): on, as in production, but high enough that the
 * load never reaches it, so the limiter does all its work (reservations, headers) and refuses
 * nothing. The row's `full-limit-off` target runs with RATE_LIMIT_PER_MINUTE=0 beside it.
 */
export const benchRateLimit = 10_000_000;

const topNames = ['Drinks', 'Breakfast', 'Burgers & sandwiches', 'Salads', 'Desserts'];
const levelNames = ['Hot', 'Cold', 'Seasonal', 'Café specials', 'Sides', 'Kids'];

interface GroupDoc {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  groups: GroupDoc[];
  items: never[];
}

export interface BenchDataset {
  accounts: Array<{ id: string; name: string }>;
  users: Array<{ id: string; account_id: string; name: string }>;
  api_keys: Array<{ id: string; user_id: string; name: string; scopes: string[]; key: string }>;
  devices: never[];
  menus: Array<{ id: string; account_id: string; name: string; description: string | null; tags: string[]; groups: GroupDoc[] }>;
}

export function benchDataset(options: { extraKeys?: number } = {}): BenchDataset {
  let serial = 0;
  const groupId = () => `3f2a9c10-0000-4000-8000-${(++serial).toString(16).padStart(12, '0')}`;
  const children = (depth: number, prefix: string): GroupDoc[] => {
    if (depth > 3) return [];
    return [0, 1, 2].map((i) => {
      const name = `${levelNames[(depth + i) % levelNames.length]} ${prefix}.${i + 1}`;
      return group(name, depth, `${prefix}.${i + 1}`);
    });
  };
  const group = (name: string, depth: number, prefix: string): GroupDoc => ({
    id: groupId(),
    name,
    description: depth === 0 ? `All of ${name.toLowerCase()}` : null,
    tags: [`depth:${depth}`],
    groups: children(depth + 1, prefix),
    items: [],
  });
  const groups = topNames.map((name, i) => group(name, 0, String(i + 1)));
  return {
    accounts: [{ id: 'acc_bench', name: 'Bench Diner' }],
    users: [{ id: 'usr_bench', account_id: 'acc_bench', name: 'Bench User' }],
    api_keys: [
      { id: 'key_bench', user_id: 'usr_bench', name: 'Bench (all scopes)', scopes: ['device:read', 'menu:read', 'hooks:write'], key: benchKey },
      ...Array.from({ length: options.extraKeys ?? 0 }, (_, i) => ({
        id: `key_bench_extra_${i + 1}`,
        user_id: 'usr_bench',
        name: `Bench extra ${i + 1}`,
        scopes: ['menu:read'],
        key: extraBenchKey(i + 1),
      })),
    ],
    devices: [],
    menus: [{ id: benchMenuId, account_id: 'acc_bench', name: 'All day', description: 'Bench menu', tags: [], groups }],
  };
}

/** Counts groups at every depth (the dataset promises exactly 200). */
export function countGroups(groups: readonly { groups: readonly unknown[] }[]): number {
  return groups.reduce((n, g) => n + 1 + countGroups(g.groups as { groups: unknown[] }[]), 0);
}
