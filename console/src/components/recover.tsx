import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction } from '../use-api';
import { ErrorMessage } from './status';

/** A `datetime-local` value for `ms`, in the reader's time zone. */
function localInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

/**
 * `POST /v1/hooks/{id}/recover`: a dry run first, whose count is shown; the recover itself only
 * when the reader confirms that count.
 */
export function Recover({ base, onDone }: { base: string; onDone: () => void }) {
  const [since, setSince] = useState(localInput(Date.now() - 86_400_000));
  const [planned, setPlanned] = useState<{ since: string; count: number } | null>(null);
  const body = () => ({ since: new Date(since).toISOString() });
  const dryRun = useAction(async () => {
    const res = await api<{ count: number }>(`${base}/recover`, { method: 'POST', body: { ...body(), dry_run: true } });
    setPlanned({ since, count: res.data.count });
    return res.data.count;
  });
  const recover = useAction(async () => {
    const res = await api<{ count: number }>(`${base}/recover`, { method: 'POST', body: body() });
    setPlanned(null);
    onDone();
    return res.data.count;
  });
  return (
    <details>
      <summary>Recover failed deliveries</summary>
      <form
        class="grid"
        onSubmit={(e) => {
          e.preventDefault();
          recover.clear();
          void dryRun.run();
        }}
      >
        <label>
          Events recorded since
          <input
            type="datetime-local"
            name="since"
            required
            value={since}
            onInput={(e) => {
              setSince(e.currentTarget.value);
              setPlanned(null);
            }}
          />
        </label>
        <button type="submit" class="secondary" aria-busy={dryRun.busy}>
          Count deliveries to recover
        </button>
      </form>
      <ErrorMessage error={dryRun.error ?? recover.error} />
      {planned && (
        <p role="status" data-testid="recover-plan">
          {planned.count} deliver{planned.count === 1 ? 'y' : 'ies'} would be sent again.{' '}
          {planned.count > 0 && (
            <button type="button" onClick={() => recover.run()} aria-busy={recover.busy}>
              Recover {planned.count}
            </button>
          )}
        </p>
      )}
      {recover.result !== null && <p role="status">Recover started: {recover.result} deliveries queued.</p>}
    </details>
  );
}
