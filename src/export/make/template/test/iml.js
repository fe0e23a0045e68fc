/**
 * A small evaluator for the part of Make's IML this app's templates use, so the tests can build
 * each request the way Make would: `{{path.to.value}}`, string and number literals, `+ - * /`,
 * comparisons (`=`, `!=`, `<`, `<=`, `>`, `>=`), `and`, `or`, and the functions `ifempty`, `join`,
 * `min`, `length` and `map`. Anything else is an error, so a template that strays from this subset fails its
 * test instead of passing by accident.
 *
 * As in Make, a string that is exactly one `{{…}}` keeps the value's type (an array stays an
 * array); text around it makes a string. Objects and arrays are evaluated member by member.
 */

const isEmpty = (value) => value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

const functions = {
  ifempty: (value, fallback) => (isEmpty(value) ? fallback : value),
  join: (list, separator) => (Array.isArray(list) ? list.join(separator ?? ', ') : list),
  min: (...values) => Math.min(...values.map(Number)),
  // Of a text or an array; of anything else nothing (so it equals no number).
  length: (value) => (Array.isArray(value) || typeof value === 'string' ? value.length : null),
  // The values of `key` in an array of collections, empty ones left out.
  map: (list, key) => (Array.isArray(list) ? list.map((item) => (item !== null && typeof item === 'object' ? item[key] : undefined)).filter((value) => !isEmpty(value)) : []),
};

const tokenPattern = /\s*(?:(\d+(?:\.\d+)?)|'([^']*)'|"([^"]*)"|([A-Za-z_$][\w$]*)|(<=|>=|!=|[=<>+\-*/().;\[\]]))/y;

function tokenize(source) {
  const tokens = [];
  tokenPattern.lastIndex = 0;
  while (tokenPattern.lastIndex < source.length) {
    if (/^\s*$/.test(source.slice(tokenPattern.lastIndex))) break;
    const start = tokenPattern.lastIndex;
    const match = tokenPattern.exec(source);
    if (!match) throw new Error(`IML: cannot read "${source.slice(start)}" in {{${source}}}`);
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]) });
    else if (match[2] !== undefined || match[3] !== undefined) tokens.push({ kind: 'string', value: match[2] ?? match[3] });
    else if (match[4] !== undefined) tokens.push({ kind: 'name', value: match[4] });
    else tokens.push({ kind: 'op', value: match[5] });
  }
  return tokens;
}

/** Recursive descent over one expression; returns its value in `scope`. */
function evaluateExpression(source, scope) {
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at];
  const isOp = (value) => peek()?.kind === 'op' && peek().value === value;
  const expect = (value) => {
    if (!isOp(value)) throw new Error(`IML: expected "${value}" in {{${source}}}`);
    at += 1;
  };

  const primary = () => {
    const token = tokens[at++];
    if (!token) throw new Error(`IML: unexpected end of {{${source}}}`);
    if (token.kind === 'number' || token.kind === 'string') return token.value;
    if (token.kind === 'op' && token.value === '(') {
      const value = conjunction();
      expect(')');
      return value;
    }
    if (token.kind === 'op' && token.value === '-') return -Number(primary());
    if (token.kind !== 'name') throw new Error(`IML: unexpected "${token.value}" in {{${source}}}`);
    if (token.value === 'true' || token.value === 'false') return token.value === 'true';
    if (token.value === 'null') return null;
    if (isOp('(')) {
      const fn = functions[token.value];
      if (!fn) throw new Error(`IML: the test harness does not know the function ${token.value}()`);
      at += 1;
      const args = [];
      while (!isOp(')')) {
        args.push(conjunction());
        if (isOp(';')) at += 1;
      }
      expect(')');
      return fn(...args);
    }
    let value = scope[token.value];
    for (;;) {
      if (isOp('.')) {
        at += 1;
        const name = tokens[at++];
        value = value === undefined || value === null ? undefined : value[name.value];
      } else if (isOp('[')) {
        at += 1;
        const index = comparison();
        expect(']');
        value = value === undefined || value === null ? undefined : value[index];
      } else return value;
    }
  };
  const product = () => {
    let value = primary();
    while (isOp('*') || isOp('/')) {
      const op = tokens[at++].value;
      const right = primary();
      value = op === '*' ? Number(value) * Number(right) : Number(value) / Number(right);
    }
    return value;
  };
  const sum = () => {
    let value = product();
    while (isOp('+') || isOp('-')) {
      const op = tokens[at++].value;
      const right = product();
      if (op === '+') value = typeof value === 'string' || typeof right === 'string' ? `${value ?? ''}${right ?? ''}` : Number(value) + Number(right);
      else value = Number(value) - Number(right);
    }
    return value;
  };
  const conjunction = () => {
    let value = comparison();
    while (peek()?.kind === 'name' && (peek().value === 'and' || peek().value === 'or')) {
      const op = tokens[at++].value;
      const right = comparison();
      value = op === 'and' ? Boolean(value) && Boolean(right) : Boolean(value) || Boolean(right);
    }
    return value;
  };
  const comparison = () => {
    const left = sum();
    for (const op of ['=', '!=', '<=', '>=', '<', '>']) {
      if (!isOp(op)) continue;
      at += 1;
      const right = sum();
      if (op === '=') return left == right; // eslint-disable-line eqeqeq -- IML compares loosely
      if (op === '!=') return left != right; // eslint-disable-line eqeqeq
      if (op === '<=') return left <= right;
      if (op === '>=') return left >= right;
      return op === '<' ? left < right : left > right;
    }
    return left;
  };

  const value = conjunction();
  if (at !== tokens.length) throw new Error(`IML: unexpected "${tokens[at].value}" in {{${source}}}`);
  return value;
}

const whole = /^\{\{([\s\S]*)\}\}$/;

/** Evaluates a template (any JSON value) in `scope`. */
export function evaluate(template, scope) {
  if (typeof template === 'string') {
    const single = whole.exec(template);
    if (single && !single[1].includes('}}')) return evaluateExpression(single[1], scope);
    return template.replace(/\{\{([\s\S]*?)\}\}/g, (_match, source) => {
      const value = evaluateExpression(source, scope);
      return value === undefined || value === null ? '' : String(value);
    });
  }
  if (Array.isArray(template)) return template.map((entry) => evaluate(entry, scope));
  if (template !== null && typeof template === 'object') {
    return Object.fromEntries(Object.entries(template).map(([key, value]) => [key, evaluate(value, scope)]));
  }
  return template;
}

/** Every `{{…}}` expression in a template, for checks on what the app's code refers to. */
export function expressions(template) {
  if (typeof template === 'string') return [...template.matchAll(/\{\{([\s\S]*?)\}\}/g)].map((match) => match[1]);
  if (Array.isArray(template)) return template.flatMap(expressions);
  if (template !== null && typeof template === 'object') return Object.values(template).flatMap(expressions);
  return [];
}
