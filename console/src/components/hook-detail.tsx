import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction } from '../use-api';
import { Badge, ErrorMessage } from './status';
import { ShownOnce } from './shown-once';
import { Deliveries } from './deliveries';
import { Recover } from './recover';

export interface Hook {
  id: string;
  target_url: string;
  events: string[];
  device_ids: string[] | null;
  status: 'active' | 'paused' | 'disabled';
  status_reason: string | null;
  created_at: string;
}

interface TestOutcome {
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** One hook's actions (docs/webhooks.md, operating webhooks) and its deliveries. */
export function HookDetail({ hook, onChanged, onDeleted }: { hook: Hook; onChanged: () => void; onDeleted: () => void }) {
  const base = `/v1/hooks/${encodeURIComponent(hook.id)}`;
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [deliveriesVersion, setDeliveriesVersion] = useState(0);
  const toggle = useAction(async () => {
    await api<Hook>(base, { method: 'PATCH', body: { enabled: hook.status === 'disabled' } });
    onChanged();
    return null;
  });
  const test = useAction(async () => {
    const outcome = (await api<TestOutcome>(`${base}/test`, { method: 'POST' })).data;
    setDeliveriesVersion((v) => v + 1);
    return outcome;
  });
  const rotate = useAction(async () => (await api<{ secret: string }>(`${base}/secret/rotate`, { method: 'POST' })).data.secret);
  const remove = useAction(async () => {
    await api(base, { method: 'DELETE' });
    onDeleted();
    return null;
  });
  const paused = hook.status === 'disabled';

  return (
    <section aria-labelledby="hook-title" data-testid="hook-detail">
      <h2 id="hook-title">
        Hook <code>{hook.target_url}</code> <Badge value={hook.status} />
      </h2>
      <p class="muted">
        Id <code>{hook.id}</code> · events {hook.events.join(', ')} · {hook.device_ids ? `${hook.device_ids.length} device(s)` : 'every device'}
        {hook.status_reason ? ` · ${hook.status_reason}` : ''}
      </p>
      <div class="actions">
        <button type="button" onClick={() => toggle.run()} aria-busy={toggle.busy} disabled={toggle.busy}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" class="secondary" onClick={() => test.run()} aria-busy={test.busy} disabled={test.busy}>
          Send test
        </button>
        <button type="button" class="secondary" onClick={() => rotate.run()} aria-busy={rotate.busy} disabled={rotate.busy}>
          Rotate secret
        </button>
        {confirmDelete ? (
          <>
            <button type="button" class="contrast" onClick={() => remove.run()} aria-busy={remove.busy}>
              Delete for good
            </button>
            <button type="button" class="secondary outline" onClick={() => setConfirmDelete(false)}>
              Keep it
            </button>
          </>
        ) : (
          <button type="button" class="secondary outline" onClick={() => setConfirmDelete(true)}>
            Delete
          </button>
        )}
      </div>
      <ErrorMessage error={toggle.error ?? test.error ?? rotate.error ?? remove.error} />
      {test.result && (
        <p role="status" data-testid="test-outcome">
          Test {test.result.delivered ? 'delivered' : 'not delivered'}:{' '}
          {test.result.status_code !== null ? `HTTP ${test.result.status_code}` : test.result.error} in {test.result.duration_ms} ms
        </p>
      )}
      {rotate.result && <ShownOnce label="New signing secret" value={rotate.result} />}
      <Recover base={base} onDone={() => setDeliveriesVersion((v) => v + 1)} />
      <Deliveries base={base} version={deliveriesVersion} />
    </section>
  );
}
