import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { fold, labelValueKey } from '../text/label-order.js';
import { menuGroupRows, type GroupNode } from './group-rows.js';
import { chunks } from './chunks.js';
import type { Tables } from './tables.js';

/**
 * Backfills of the dropdowns' label columns, computed here, not in SQL: keys follow the
 * dropdown's collator (src/text/label-order.ts), paths its separator.
 *
 * Fills `device_access.sort_key` and `folded` (migration 8, docs/options.md "Big accounts")
 * for the rows written before they existed. Computed here, not in SQL: the key follows the
 * dropdown's collator (src/text/label-order.ts).
 */

interface Labelled {
  id: string;
  sort_key: string | null;
  folded: string;
}

const labelled = (rows: Array<{ id: string; name: string }>): Labelled[] =>
  rows.map(({ id, name }) => ({ id, sort_key: labelValueKey(name, id), folded: fold(name) }));

export function backfillLabelsSqlite(raw: BetterSqlite3.Database): void {
  const rows = raw.prepare('SELECT id, name FROM devices').all() as Array<{ id: string; name: string }>;
  const update = raw.prepare('UPDATE device_access SET sort_key = ?, folded = ? WHERE device_id = ?');
  for (const row of labelled(rows)) update.run(row.sort_key, row.folded, row.id);
}

export async function backfillLabelsPostgres(trx: Kysely<Tables>): Promise<void> {
  const rows = await trx.selectFrom('devices').select(['id', 'name']).execute();
  for (const part of chunks(labelled(rows))) {
    const values = sql.join(part.map((r) => sql`(${r.id}, ${r.sort_key}, ${r.folded})`));
    await sql`UPDATE device_access SET sort_key = v.sort_key, folded = v.folded
      FROM (VALUES ${values}) AS v(id, sort_key, folded) WHERE device_access.device_id = v.id`.execute(trx);
  }
}

/** Fills `menu_groups` (migration 10) from each stored menu's groups. */
export function backfillMenuGroupsSqlite(raw: BetterSqlite3.Database): void {
  const menus = raw.prepare('SELECT id, groups_json FROM menus').all() as Array<{ id: string; groups_json: string }>;
  const insert = raw.prepare(
    'INSERT INTO menu_groups (menu_id, position, id, parent_id, name, path, has_children, folded_path, folded_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  for (const menu of menus) {
    for (const r of menuGroupRows(menu.id, JSON.parse(menu.groups_json) as GroupNode[])) {
      insert.run(r.menu_id, r.position, r.id, r.parent_id, r.name, r.path, r.has_children, r.folded_path, r.folded_name);
    }
  }
}

export async function backfillMenuGroupsPostgres(trx: Kysely<Tables>): Promise<void> {
  const menus = await trx.selectFrom('menus').select(['id', 'groups_json']).execute();
  for (const menu of menus) {
    for (const part of chunks(menuGroupRows(menu.id, JSON.parse(menu.groups_json) as GroupNode[]))) {
      await trx.insertInto('menu_groups').values(part).execute();
    }
  }
}
