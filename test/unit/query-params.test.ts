import { describe, expect, test } from '@jest/globals';
import { z } from 'zod';
import { AppError } from '../../src/errors.js';
import { boolParam, enumParam, intParam, listParam, parseQuery, scalarParam } from '../../src/http/query.js';

const schema = z.object({
  flag: boolParam('flag').optional(),
  n: intParam('n', 1, 10).default(3),
  big: intParam('big', 1, Number.MAX_SAFE_INTEGER).optional(),
  kind: enumParam('kind', ['a', 'b']).default('a'),
  list: listParam('list', 3).optional(),
  text: scalarParam('text').optional(),
});

function problems(query: Record<string, string | string[]>) {
  try {
    parseQuery(schema, query);
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    const e = err as AppError;
    expect(e.status).toBe(400);
    expect(e.message).toBe(e.details![0]!.message);
    return e.details;
  }
  throw new Error('expected a 400');
}

describe('parseQuery', () => {
  test('defaults, conversions, unknown parameters ignored', () => {
    expect(parseQuery(schema, { other: 'x', flag: 'false', n: '7', list: ['b, a', ' a '] })).toEqual({
      flag: false,
      n: 7,
      kind: 'a',
      list: ['b', 'a'],
    });
  });

  test('one detail per bad parameter, all of them, in schema order', () => {
    expect(problems({ list: 'a,b,c,d', n: '0', flag: 'yes', kind: 'c', text: ['x', 'y'], big: '1e3' })).toEqual([
      { path: 'flag', message: 'flag must be true or false' },
      { path: 'n', message: 'n must be an integer from 1 to 10' },
      { path: 'big', message: 'big must be an integer of at least 1' },
      { path: 'kind', message: 'kind must be one of a, b' },
      { path: 'list', message: 'list must list 1 to 3 comma-separated values' },
      { path: 'text', message: 'text must be given once' },
    ]);
  });

  test.each(['', '1.5', '0x10', '-1', '+1', '11', 'abc', '9007199254740992', ' 7', '7 ', ' 7 ', '\t7', '7\n', '1e1'])('n=%p is a 400 naming n', (value) => {
    expect(problems({ n: value })).toEqual([{ path: 'n', message: 'n must be an integer from 1 to 10' }]);
  });

  test('a repeated scalar is a 400; a repeated list is not', () => {
    expect(problems({ n: ['1', '1'] })).toEqual([{ path: 'n', message: 'n must be given once' }]);
    expect(problems({ flag: ['true', 'true'] })).toEqual([{ path: 'flag', message: 'flag must be given once' }]);
    expect(parseQuery(schema, { list: ['a', 'b'] }).list).toEqual(['a', 'b']);
  });

  test('an empty list is an error, not "no filter"', () => {
    for (const value of ['', ',', ' , ', ['', '']]) {
      expect(problems({ list: value })).toEqual([{ path: 'list', message: 'list must list 1 to 3 comma-separated values' }]);
    }
  });

  test('an empty value inside a list is an error, not skipped', () => {
    for (const value of ['a,,b', 'a,', ',a', 'a, ,b', ['a', '']]) {
      expect(problems({ list: value })).toEqual([{ path: 'list', message: 'list must not contain an empty value' }]);
    }
  });

  test('the maximum counts the values given, duplicates included; duplicates are then dropped', () => {
    expect(problems({ list: 'a,b,a,b' })).toEqual([{ path: 'list', message: 'list must list 1 to 3 comma-separated values' }]);
    expect(parseQuery(schema, { list: 'a,b,a' }).list).toEqual(['a', 'b']);
  });
});
