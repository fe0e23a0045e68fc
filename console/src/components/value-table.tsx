/** A JSON value the console shows as it came: objects as definition lists, arrays of objects as tables. */
export function ValueView({ value, caption }: { value: unknown; caption?: string }) {
  if (Array.isArray(value)) {
    if (value.length === 0) return <p class="muted">None.</p>;
    if (value.every((v) => v !== null && typeof v === 'object' && !Array.isArray(v))) {
      const columns = [...new Set(value.flatMap((v) => Object.keys(v as object)))];
      return (
        <div class="overflow-auto">
          <table class="striped">
            {caption && <caption class="muted">{caption}</caption>}
            <thead>
              <tr>{columns.map((c) => <th key={c} scope="col">{c}</th>)}</tr>
            </thead>
            <tbody>
              {value.map((row, i) => (
                <tr key={i}>{columns.map((c) => <td key={c}>{scalar((row as Record<string, unknown>)[c])}</td>)}</tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
    return <span>{value.map(scalar).join(', ')}</span>;
  }
  if (value !== null && typeof value === 'object') {
    return (
      <dl>
        {Object.entries(value).map(([k, v]) => (
          <div key={k}>
            <dt>{k}</dt>
            <dd><ValueView value={v} caption={k} /></dd>
          </div>
        ))}
      </dl>
    );
  }
  return <span>{scalar(value)}</span>;
}

function scalar(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
