import type { ApiError } from '../api';

/** An API error, worded as the API worded it, with each detail it named. */
export function ErrorMessage({ error }: { error: ApiError | null }) {
  if (!error) return null;
  return (
    <div role="alert" class="error">
      <strong>{error.message}</strong>
      {error.status > 0 && <span class="muted"> (HTTP {error.status})</span>}
      {error.details.length > 0 && (
        <ul>
          {error.details.map((d) => (
            <li key={d.path}>
              <code>{d.path}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return <p aria-busy="true">Loading {what}…</p>;
}

/** The status of a hook or delivery as a labelled badge. */
export function Badge({ value }: { value: string }) {
  return <span class={`badge badge-${value}`}>{value}</span>;
}
