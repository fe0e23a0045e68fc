/**
 * Label templates of option sources: `{field}` inserts a record field, `{field|text}` inserts
 * `text` when the field is null or missing; everything else is literal (`{name} — ${price}`).
 */
const placeholder = /\{([A-Za-z_][A-Za-z0-9_]*)(?:\|([^{}]*))?\}/g;

/** The field names a template refers to. */
export function templateFields(template: string): string[] {
  return [...template.matchAll(placeholder)].map((m) => m[1]!);
}

export type Render = (record: Record<string, unknown>) => string;

/** Compiles a template once into a function of a record. */
export function compileTemplate(template: string): Render {
  const parts: Array<string | { field: string; fallback: string }> = [];
  let last = 0;
  for (const m of template.matchAll(placeholder)) {
    parts.push(template.slice(last, m.index));
    parts.push({ field: m[1]!, fallback: m[2] ?? '' });
    last = m.index + m[0].length;
  }
  parts.push(template.slice(last));
  return (record) =>
    parts
      .map((part) => {
        if (typeof part === 'string') return part;
        const value = record[part.field];
        return value === null || value === undefined ? part.fallback : String(value);
      })
      .join('');
}
