/**
 * JavaScript source for plain data, written the way a person formats a component file: one
 * property per line, identifiers unquoted where they can be, double-quoted strings, trailing
 * commas. `code()` marks text that goes in as it is (a function, an identifier, a spread).
 */

export class Code {
  constructor(readonly text: string) {}
}

/** Text inserted verbatim; its lines after the first are indented with the value around it. */
export const code = (text: string) => new Code(text);

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `key:` with the key quoted only when it must be. */
const keyText = (key: string) => (identifier.test(key) ? key : JSON.stringify(key));

function indentLines(text: string, pad: string): string {
  return text.split('\n').join(`\n${pad}`);
}

/** `run() {…}` or `async run() {…}`: a method written out under its own key. */
const isMethodOf = (text: string, key: string) => text.startsWith(`${key}(`) || text.startsWith(`async ${key}(`);

/** `value` as a JavaScript expression, nested lines indented by two spaces per level. */
export function jsLiteral(value: unknown, pad = ''): string {
  const inner = `${pad}  `;
  if (value instanceof Code) return indentLines(value.text, pad);
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${jsLiteral(item, inner)},\n`).join('')}${pad}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined);
  if (entries.length === 0) return '{}';
  const lines = entries.map(([key, item]) => {
    // A `...name` key is a spread (`...common.props`); a method or a shorthand property is Code
    // whose text starts with the key itself (`async run() {…}`, `app`).
    if (key.startsWith('...')) return `${inner}${key},\n`;
    if (item instanceof Code && (item.text === key || isMethodOf(item.text, key))) return `${inner}${jsLiteral(item, inner)},\n`;
    return `${inner}${keyText(key)}: ${jsLiteral(item, inner)},\n`;
  });
  return `{\n${lines.join('')}${pad}}`;
}
