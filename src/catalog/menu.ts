import { z } from 'zod';
import { component, count } from './registry.js';

/** Menus, groups and items of the menu area (docs/menus.md). */

export const Menu = component(
  'Menu',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    metadata: z.strictObject({ groups: z.strictObject({ total: count.describe('Top-level groups.') }) }),
  }),
);

export const MenuList = component(
  'MenuList',
  z.strictObject({
    metadata: z.strictObject({ menus: z.strictObject({ total: count }) }),
    menus: z.array(Menu),
  }),
);

interface ItemShape {
  metadata: { items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  price: number | null;
  calories: number | null;
  tags: string[];
  inStock: boolean;
  items: ItemShape[];
}

interface GroupShape {
  metadata: { groups: { total: number }; items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  groups: GroupShape[];
  items: ItemShape[];
}

export const Item: z.ZodType<ItemShape> = component(
  'Item',
  z.strictObject({
    metadata: z.strictObject({ items: z.strictObject({ total: count }) }),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    price: z.number().nullable(),
    calories: z.number().nullable(),
    tags: z.array(z.string()),
    inStock: z.boolean(),
    get items(): z.ZodArray<z.ZodType<ItemShape>> {
      return z.array(Item);
    },
  }),
);

export const Group: z.ZodType<GroupShape> = component(
  'Group',
  z.strictObject({
    metadata: z.strictObject({ groups: z.strictObject({ total: count }), items: z.strictObject({ total: count }) }),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    get groups(): z.ZodArray<z.ZodType<GroupShape>> {
      return z.array(Group);
    },
    get items(): z.ZodArray<z.ZodType<ItemShape>> {
      return z.array(Item);
    },
  }),
);

export const GroupList = component(
  'GroupList',
  z.strictObject({
    metadata: z.strictObject({ groups: z.strictObject({ total: count }) }),
    groups: z.array(Group),
  }),
);

export type Item = z.infer<typeof Item>;
export type Group = z.infer<typeof Group>;
export type Menu = z.infer<typeof Menu>;
