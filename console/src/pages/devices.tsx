import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorMessage, Loading } from '../components/status';
import { TransitionsChart, type Summary } from '../components/transitions-chart';
import { DeviceList } from '../components/device-list';
import { age, count, when } from '../format';
import { useApi } from '../use-api';

interface DevicePage {
  total: number;
  data: unknown[];
}

interface Transition {
  id: string;
  type: string;
  occurred_at: string;
  device: { id: string; name: string };
}

/** Online and offline counts: two one-device pages, whose `total` counts every match. */
function Counts() {
  const counts = useApi(async () => {
    const [online, offline] = await Promise.all(
      [true, false].map((isOnline) => api<DevicePage>('/devices', { query: { is_online: isOnline, page_size: 1 } })),
    );
    return { online: online!.data.total, offline: offline!.data.total };
  }, []);
  if (counts.error) return <ErrorMessage error={counts.error} />;
  return (
    <div class="grid counts" aria-busy={counts.loading}>
      <article>
        <h2>Online</h2>
        <p class="big" data-testid="online-count">{count(counts.data?.online)}</p>
      </article>
      <article>
        <h2>Offline</h2>
        <p class="big" data-testid="offline-count">{count(counts.data?.offline)}</p>
      </article>
      <article>
        <h2>All devices</h2>
        <p class="big">{counts.data ? count(counts.data.online + counts.data.offline) : '—'}</p>
      </article>
    </div>
  );
}

/**
 * The chart of the week and the latest transitions. Reading the polling trigger also enrols the
 * key with the poller (as a platform's trigger does), so transitions are recorded from now on.
 */
function Transitions() {
  const summary = useApi(() => api<Summary>('/v1/events/summary', { query: { interval: 'hour' } }).then((a) => a.data), []);
  const latest = useApi(() => api<Transition[]>('/v1/triggers/device-status', { query: { limit: 10 } }).then((a) => a.data), []);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => {
      setNow(Date.now());
      summary.reload();
      latest.reload();
    }, 30_000);
    return () => clearInterval(timer);
  }, []);
  return (
    <section aria-labelledby="transitions-title">
      <h2 id="transitions-title">Transitions per hour</h2>
      <ErrorMessage error={summary.error} />
      {summary.data ? <TransitionsChart summary={summary.data} /> : !summary.error && <Loading what="the chart" />}
      <details>
        <summary>Latest transitions</summary>
        <ErrorMessage error={latest.error} />
        {latest.data && latest.data.length === 0 && <p>None recorded yet: transitions are logged from the key's first poll on.</p>}
        {latest.data && latest.data.length > 0 && (
          <ul data-testid="latest-transitions">
            {latest.data.map((e) => (
              <li key={e.id}>
                <time dateTime={e.occurred_at} title={when(e.occurred_at)}>{age(e.occurred_at, now)}</time>: {e.device.name} ({e.device.id}) {e.type === 'device.offline' ? 'went offline' : 'came back online'}
              </li>
            ))}
          </ul>
        )}
      </details>
      <button type="button" class="secondary outline" onClick={() => { summary.reload(); latest.reload(); }}>
        Refresh chart
      </button>
    </section>
  );
}

export function DevicesPage() {
  return (
    <>
      <h1>Devices</h1>
      <Counts />
      <Transitions />
      <DeviceList />
    </>
  );
}
