import { describe, expect, test } from '@jest/globals';
import { code, jsLiteral } from '../../src/export/shared/js-literal.js';

describe('jsLiteral', () => {
  test('writes data one property per line, keys unquoted where they can be, with trailing commas', () => {
    expect(jsLiteral({ key: 'a "b"', 'web-hook': [1, true, null], empty: {}, none: [], skipped: undefined })).toBe(
      ['{', '  key: "a \\"b\\"",', '  "web-hook": [', '    1,', '    true,', '    null,', '  ],', '  empty: {},', '  none: [],', '}'].join('\n'),
    );
  });

  test('inserts code as it is: values, shorthand properties, spreads and methods, indented where they sit', () => {
    const text = jsLiteral({
      app: code('app'),
      '...common': code('...common'),
      props: { list: code('[app, "devices"]') },
      run: code('async run() {\n  return 1;\n}'),
    });
    expect(text).toBe(
      ['{', '  app,', '  ...common,', '  props: {', '    list: [app, "devices"],', '  },', '  async run() {', '    return 1;', '  },', '}'].join('\n'),
    );
  });
});
