import { api } from '../api';
import { when } from '../format';
import { useApi } from '../use-api';
import { ErrorMessage, Loading, Badge } from './status';

interface Attempt {
  attempt?: number;
  attempted_at?: string;
  request_headers?: Record<string, string>;
  status_code?: number | null;
  response_body?: string | null;
  duration_ms?: number;
  error?: string | null;
  next_attempt_at?: string | null;
}

interface Delivery {
  delivery_id: string;
  event_id: string;
  status?: string;
  delivery_status?: string;
  next_attempt_at?: string | null;
  attempts: Attempt[];
}

/** `GET /v1/hooks/{id}/deliveries/{delivery_id}`: every attempt, what was sent and what came back. */
export function DeliveryDetail({ base, deliveryId, onClose }: { base: string; deliveryId: string; onClose: () => void }) {
  const detail = useApi(() => api<Delivery>(`${base}/deliveries/${encodeURIComponent(deliveryId)}`).then((a) => a.data), [base, deliveryId]);
  const d = detail.data;
  return (
    <article aria-labelledby="delivery-title" data-testid="delivery-detail">
      <header>
        <h4 id="delivery-title">
          Delivery <code>{deliveryId}</code> {d && <Badge value={d.status ?? d.delivery_status ?? 'unknown'} />}
        </h4>
        {d && (
          <small>
            event <code>{d.event_id}</code> · next attempt {when(d.next_attempt_at ?? null)}
          </small>
        )}
      </header>
      <ErrorMessage error={detail.error} />
      {detail.loading && !d && <Loading what="attempts" />}
      {d?.attempts.map((a, i) => (
        <details key={i} open={i === 0}>
          <summary>
            Attempt {a.attempt ?? i + 1} at {when(a.attempted_at ?? null)}: {a.status_code != null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer')} in{' '}
            {a.duration_ms ?? '?'} ms
          </summary>
          {a.error && <p>Error: {a.error}</p>}
          <p>Request headers</p>
          <pre class="answer" tabIndex={0}>
            {Object.entries(a.request_headers ?? {})
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n')}
          </pre>
          <p>Response body (first 1,024 bytes)</p>
          <pre class="answer" tabIndex={0}>
            {a.response_body ?? ''}
          </pre>
        </details>
      ))}
      {d && d.attempts.length === 0 && <p>No attempt yet.</p>}
      <button type="button" class="secondary outline" onClick={onClose}>
        Close
      </button>
    </article>
  );
}
