/** Where a JSON text stops being valid JSON, 1-based, and why. */
export interface JsonErrorLocation {
  line: number;
  column: number;
  reason: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const escapes = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * Finds the first syntax error of a text that `JSON.parse` refused. Node 20's messages give a
 * position for only some errors ("Unexpected token ' ', "…" is not valid JSON" has none), so a
 * small validating scan (RFC 8259 grammar, no values built) locates it instead. Run only after
 * a failed parse; null if the scan finds nothing wrong.
 */
export function locateJsonError(text: string): JsonErrorLocation | null {
  let i = 0;
  const fail = (reason: string): never => {
    throw new Stop(i, reason);
  };
  const shown = (): string => (i >= text.length ? 'end of file' : JSON.stringify(text[i]));
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const string = () => {
    i += 1;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i]!;
      if (c === '"') break;
      if (c < ' ') fail('control character in a string (a newline or tab must be written \\n or \\t)');
      if (c === '\\') {
        const next = text[i + 1] ?? '';
        if (next === 'u' ? !/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)) : !escapes.has(next)) fail('invalid escape in a string');
        i += next === 'u' ? 6 : 2;
      } else i += 1;
    }
    i += 1;
  };
  const container = (close: '}' | ']') => {
    i += 1;
    space();
    if (text[i] === close) return void (i += 1);
    for (;;) {
      space();
      if (close === '}') {
        if (text[i] !== '"') fail(text[i] === '}' ? "trailing comma before '}'" : `expected a property name in double quotes, found ${shown()}`);
        string();
        space();
        if (text[i] !== ':') fail(`expected ':' after a property name, found ${shown()}`);
        i += 1;
      } else if (text[i] === ']') fail("trailing comma before ']'");
      value();
      space();
      if (text[i] === close) return void (i += 1);
      if (text[i] !== ',') fail(`expected ',' or '${close}', found ${shown()}`);
      i += 1;
    }
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === '{' || c === '[') return container(c === '{' ? '}' : ']');
    if (c === '"') return string();
    for (const literal of ['true', 'false', 'null']) if (text.startsWith(literal, i)) return void (i += literal.length);
    numberPattern.lastIndex = i;
    const number = numberPattern.exec(text);
    if (number) return void (i += number[0].length);
    if (c === '\uFEFF') fail('byte order mark (save the file as UTF-8 without BOM)');
    fail(`unexpected ${shown()}`);
  };
  try {
    space();
    if (i >= text.length) fail('the file is empty');
    value();
    space();
    if (i < text.length) fail(`unexpected ${shown()} after the end of the JSON document`);
    return null;
  } catch (err) {
    if (!(err instanceof Stop)) return null; // e.g. nesting deeper than the stack: no location
    return { ...lineAndColumn(text, err.offset), reason: err.reason };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line += 1;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
