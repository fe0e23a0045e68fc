import { describe, expect, test } from '@jest/globals';
import { datasetNestingIssues, groupNestingIssue, nestingLimits } from '../../src/dataset/nesting.js';
import { DatasetError, jsonPath, parseDataset } from '../../src/dataset/import.js';

/** A chain of `depth` groups, each the only child of the one above. */
function chain(depth: number, leaf: Record<string, unknown> = {}): Record<string, unknown> {
  let node: Record<string, unknown> = { id: `g${depth}`, name: `Level ${depth}`, groups: [], items: [], ...leaf };
  for (let level = depth - 1; level >= 1; level--) node = { id: `g${level}`, name: `Level ${level}`, groups: [node], items: [] };
  return node;
}

function items(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { id: `i${depth}`, name: 'x', inStock: true, items: [] };
  for (let level = depth - 1; level >= 1; level--) node = { id: `i${level}`, name: 'x', inStock: true, items: [node] };
  return node;
}

const menu = (groups: unknown[]) => ({ accounts: [], menus: [{ id: 'm1', account_id: 'a', name: 'M', groups }] });

describe('nesting limits (groups 32, items 8)', () => {
  test('the limits are the documented ones', () => {
    expect(nestingLimits).toEqual({ groups: 32, items: 8 });
  });

  test('32 levels of groups and 8 of items are fine', () => {
    expect(groupNestingIssue([chain(32, { items: [items(8)] })], ['groups'])).toBeNull();
  });

  test('the 33rd level of groups is named by its JSON path and the limit', () => {
    const issue = groupNestingIssue([chain(33)], ['groups']);
    expect(issue!.message).toBe('groups nest more than 32 levels deep here (the limit is 32)');
    expect(jsonPath(issue!.path)).toBe(`groups[0]${'.groups[0]'.repeat(32)}`);
  });

  test('the 9th level of items is named by its JSON path and the limit', () => {
    const issue = groupNestingIssue([{ id: 'g', name: 'g', groups: [], items: [items(9)] }], ['groups']);
    expect(issue!.message).toBe('items nest more than 8 levels deep here (the limit is 8)');
    expect(jsonPath(issue!.path)).toBe(`groups[0].items[0]${'.items[0]'.repeat(8)}`);
  });

  test('100,000 levels: an issue, not a stack overflow, and parseDataset says where', () => {
    const deep = menu([chain(100_000)]);
    expect(datasetNestingIssues(deep)).toHaveLength(1);
    let thrown: unknown;
    try {
      parseDataset(deep);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DatasetError);
    expect((thrown as DatasetError).issues).toEqual([
      { path: `menus[0].groups[0]${'.groups[0]'.repeat(32)}`, message: 'groups nest more than 32 levels deep here (the limit is 32)' },
    ]);
  });

  test('what is not a tree is left to the schema', () => {
    expect(groupNestingIssue('nope', ['groups'])).toBeNull();
    expect(datasetNestingIssues({ menus: [{ groups: 5 }, null] })).toEqual([]);
  });
});
