import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { inChunks } from '../db/chunks.js';
import { hashKey } from '../auth/keys.js';
import type { Dataset, GroupInput } from './schema.js';
import type { DatasetIssue } from './parse.js';

/**
 * Cross-record checks zod cannot make: unique ids, and references that must resolve to a
 * record in the file or (without --prune, which deletes everything else) in the database.
 */
export async function checkReferences(db: Kysely<Tables>, dataset: Dataset, prune: boolean): Promise<DatasetIssue[]> {
  const issues: DatasetIssue[] = [];
  const stored = async (table: 'accounts' | 'users', wanted: string[]): Promise<Set<string>> => {
    if (prune || wanted.length === 0) return new Set();
    const rows = await inChunks(wanted, (ids) => db.selectFrom(table).select('id').where('id', 'in', ids).execute());
    return new Set(rows.map((r) => r.id));
  };
  const exists = (inFile: Set<string>, inDb: Set<string>) => (id: string) => inFile.has(id) || inDb.has(id);

  uniqueIds(dataset.accounts, 'accounts', (a) => a.id, issues);
  uniqueIds(dataset.users, 'users', (u) => u.id, issues);
  uniqueIds(dataset.api_keys, 'api_keys', (k) => k.id, issues);
  uniqueIds(dataset.devices, 'devices', (d) => d.id.toLowerCase(), issues);
  uniqueIds(dataset.menus, 'menus', (m) => m.id, issues);

  const accountRefs = [...dataset.users.map((u) => u.account_id), ...dataset.menus.map((m) => m.account_id)];
  const userRefs = [...dataset.api_keys.map((k) => k.user_id), ...dataset.devices.flatMap((d) => d.access.map((a) => a.user_id))];
  const accountExists = exists(new Set(dataset.accounts.map((a) => a.id)), await stored('accounts', [...new Set(accountRefs)]));
  const userExists = exists(new Set(dataset.users.map((u) => u.id)), await stored('users', [...new Set(userRefs)]));

  dataset.users.forEach((user, i) => {
    if (!accountExists(user.account_id)) issues.push(unknown(`users[${i}].account_id`, 'account', user.account_id));
  });
  dataset.api_keys.forEach((key, i) => {
    if (!userExists(key.user_id)) issues.push(unknown(`api_keys[${i}].user_id`, 'user', key.user_id));
  });
  dataset.devices.forEach((device, i) => {
    const seen = new Set<string>();
    device.access.forEach((access, j) => {
      const path = `devices[${i}].access[${j}].user_id`;
      if (!userExists(access.user_id)) issues.push(unknown(path, 'user', access.user_id));
      if (seen.has(access.user_id)) issues.push({ path, message: `user "${access.user_id}" is listed twice` });
      seen.add(access.user_id);
    });
  });
  dataset.menus.forEach((menu, i) => {
    if (!accountExists(menu.account_id)) issues.push(unknown(`menus[${i}].account_id`, 'account', menu.account_id));
  });
  await checkKeyHashes(db, dataset, prune, issues);
  checkTreeIds(dataset, issues);
  return issues;
}

function unknown(path: string, kind: string, id: string): DatasetIssue {
  return { path, message: `unknown ${kind} "${id}"` };
}

function uniqueIds<T>(records: T[], name: string, idOf: (record: T) => string, issues: DatasetIssue[]): void {
  const seen = new Map<string, number>();
  records.forEach((record, i) => {
    const id = idOf(record);
    const first = seen.get(id);
    if (first !== undefined) issues.push({ path: `${name}[${i}].id`, message: `duplicate id "${id}" (also ${name}[${first}])` });
    else seen.set(id, i);
  });
}

/** Two keys may not share a hash; the message never echoes the key itself. */
async function checkKeyHashes(db: Kysely<Tables>, dataset: Dataset, prune: boolean, issues: DatasetIssue[]): Promise<void> {
  const hashes = dataset.api_keys.map((key) => key.key_sha256 ?? hashKey(key.key!));
  const rows = await inChunks(hashes, (part) => db.selectFrom('api_keys').select(['id', 'key_sha256']).where('key_sha256', 'in', part).execute());
  const ownerOf = new Map(rows.map((r) => [r.key_sha256, r.id]));
  const seen = new Map<string, string>();
  const fileIds = new Set(dataset.api_keys.map((k) => k.id));
  dataset.api_keys.forEach((key, i) => {
    const field = key.key !== undefined ? 'key' : 'key_sha256';
    const hash = hashes[i]!;
    const other = seen.get(hash);
    if (other !== undefined) issues.push({ path: `api_keys[${i}].${field}`, message: `same key as api key "${other}"` });
    seen.set(hash, key.id);
    const owner = ownerOf.get(hash);
    // A key held by a record this import rewrites or prunes is free to move.
    if (owner !== undefined && owner !== key.id && !fileIds.has(owner) && !prune) {
      issues.push({ path: `api_keys[${i}].${field}`, message: `same key as existing api key "${owner}"` });
    }
  });
}

/** Group and item ids must be unique across the file's menus, so a group id names one group. */
function checkTreeIds(dataset: Dataset, issues: DatasetIssue[]): void {
  const seen = new Map<string, string>();
  const visit = (groups: GroupInput[], path: string): void => {
    groups.forEach((group, i) => {
      const here = `${path}.groups[${i}]`;
      const id = group.id.toLowerCase();
      const first = seen.get(id);
      if (first !== undefined) issues.push({ path: `${here}.id`, message: `duplicate group id "${group.id}" (also ${first})` });
      else seen.set(id, here);
      visit(group.groups, here);
    });
  };
  dataset.menus.forEach((menu, i) => visit(menu.groups, `menus[${i}]`));
}
