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

/**
 * Online and offline counts: one-device pages, whose `total` counts every match. Offline is all
 * minus online: one count over the heartbeats instead of two. That count reads every device's
 * heartbeat (about 0.3 s for 100,000), so it is asked for once the list is shown (`ready`): the
 * list's page is not queued behind it.
 */
function Counts({ ready, onLoaded }: { ready: boolean; onLoaded: () => void }) {
  const all = useApi(() => api<DevicePage>('/devices', { query: { page_size: 1 } }).then((a) => a.data.total), []);
  const online = useApi(
    () => (ready ? api<DevicePage>('/devices', { query: { is_online: true, page_size: 1 } }).then((a) => a.data.total) : Promise.resolve(null)),
    [ready],
  );
  const counts = {
    loading: all.loading || online.loading || online.data === null,
    error: all.error ?? online.error,
    data: all.data !== null && online.data !== null ? { online: online.data, offline: all.data - online.data } : null,
  };
  useEffect(() => {
    if (counts.data) onLoaded();
  }, [counts.data !== null]);
  if (counts.error) return <ErrorMessage error={counts.error} />;
  return (
    <div class="grid counts" aria-busy={counts.loading}>
      <article>
        <h2>Online</h2>
        <p class="big" data-testid="online-count">
          {count(counts.data?.online)}
        </p>
      </article>
      <article>
        <h2>Offline</h2>
        <p class="big" data-testid="offline-count">
          {count(counts.data?.offline)}
        </p>
      </article>
      <article>
        <h2>All devices</h2>
        <p class="big" data-testid="all-count">
          {count(all.data)}
        </p>
      </article>
    </div>
  );
}

/**
 * The chart of the week and the latest transitions. Reading the polling trigger also enrols the
 * key with the poller (as a platform's trigger does), so transitions are recorded from now on.
 * A key's first enrolment records a baseline of all its devices (seconds for 100,000), so it is
 * asked for only once the counts and the list are shown (`ready`).
 */
function Transitions({ ready }: { ready: boolean }) {
  const summary = useApi(() => api<Summary>('/v1/events/summary', { query: { interval: 'hour' } }).then((a) => a.data), []);
  const latest = useApi(
    () => (ready ? api<Transition[]>('/v1/triggers/device-status', { query: { limit: 10 } }).then((a) => a.data) : Promise.resolve(null)),
    [ready],
  );
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
        {latest.loading && <Loading what="the latest transitions" />}
        {latest.data && latest.data.length === 0 && <p data-testid="no-transitions">None recorded yet: transitions are logged from the key's first poll on.</p>}
        {latest.data && latest.data.length > 0 && (
          <ul data-testid="latest-transitions">
            {latest.data.map((e) => (
              <li key={e.id}>
                <time dateTime={e.occurred_at} title={when(e.occurred_at)}>
                  {age(e.occurred_at, now)}
                </time>
                : {e.device.name} ({e.device.id}) {e.type === 'device.offline' ? 'went offline' : 'came back online'}
              </li>
            ))}
          </ul>
        )}
      </details>
      <button
        type="button"
        class="secondary outline"
        onClick={() => {
          summary.reload();
          latest.reload();
        }}
      >
        Refresh chart
      </button>
    </section>
  );
}

export function DevicesPage() {
  const [countsShown, setCountsShown] = useState(false);
  const [listShown, setListShown] = useState(false);
  return (
    <>
      <h1>Devices</h1>
      <Counts ready={listShown} onLoaded={() => setCountsShown(true)} />
      <Transitions ready={countsShown && listShown} />
      <DeviceList onLoaded={() => setListShown(true)} />
    </>
  );
}
