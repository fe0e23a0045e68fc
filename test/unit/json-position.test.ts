import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { locateJsonError } from '../../src/dataset/json-position.js';
import { demoDatasetPath } from '../../src/paths.js';

describe('locateJsonError', () => {
  test.each([
    ['a trailing comma in an object', '{\n  "a": 1,\n  "b": 2,\n}', 4, 1, "trailing comma before '}'"],
    ['a trailing comma in an array', '{"list": [\n  1,\n  2,\n]}', 4, 1, "trailing comma before ']'"],
    ['a missing comma', '{\n  "a": 1\n  "b": 2\n}', 3, 3, `expected ',' or '}', found "\\""`],
    ['a misspelt literal', '{\n  "ok": tru\n}', 2, 9, 'unexpected "t"'],
    ['an unquoted property name', '{\n  name: "x"\n}', 2, 3, 'expected a property name in double quotes, found "n"'],
    ['single quotes', '{"a": \'x\'}', 1, 7, `unexpected "'"`],
    ['a missing colon', '{"a" 1}', 1, 6, 'expected \':\' after a property name, found "1"'],
    ['a newline inside a string', '{"a": "x\ny"}', 1, 9, 'control character in a string (a newline or tab must be written \\n or \\t)'],
    ['a bad escape', '{"a": "C:\\dir"}', 1, 10, 'invalid escape in a string'],
    ['a truncated file', '{\n  "a": [1, 2', 2, 13, `expected ',' or ']', found end of file`],
    ['an unterminated string', '{"a": "x', 1, 9, 'unterminated string'],
    ['an empty file', '  \n', 2, 1, 'the file is empty'],
    ['text after the document', '{}\n{}', 2, 1, 'unexpected "{" after the end of the JSON document'],
    ['a byte order mark', '\uFEFF{}', 1, 1, 'byte order mark (save the file as UTF-8 without BOM)'],
    ['CRLF line ends', '{\r\n  "a": 1,\r\n}', 3, 1, "trailing comma before '}'"],
  ])('%s', (_name, text, line, column, reason) => {
    expect(() => JSON.parse(text)).toThrow();
    expect(locateJsonError(text)).toEqual({ line, column, reason });
  });

  test('valid JSON has no error, including the demo dataset and every escape and number form', () => {
    expect(locateJsonError(readFileSync(demoDatasetPath, 'utf8'))).toBeNull();
    expect(
      locateJsonError('{"s": "\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9", "n": [0, -1, 1.5, 2e10, -3.25E-2], "x": [true, false, null, {}, []]}'),
    ).toBeNull();
  });
});
