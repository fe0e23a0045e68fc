import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { age, count, when } from '../format';
import { useApi } from '../use-api';
import { ErrorMessage } from './status';

interface Device {
  id: string;
  name: string;
  is_online: boolean;
  last_heartbeat_at: string | null;
  timezone: string;
}

const pageSize = 25;

interface ListPage {
  devices: Device[];
  /** Browsing: the total of matches; searching: the dropdown's `X-Total-Count`. */
  total: number | null;
  /** Searching: the next page's path (the dropdown's `Link`). */
  next: string | null;
}

/**
 * Browsing pages `GET /devices` (`page`, `page_size`). Searching asks the device dropdown
 * (`GET /v1/devices/options?q=…&limit=`, the server's search) for a page of ids and then
 * `GET /devices?ids=…` for their details: the browser never holds more than one page.
 */
async function loadPage(q: string, status: string, page: number, cursorPath: string | null): Promise<ListPage> {
  const isOnline = status === '' ? undefined : status === 'online';
  if (!q) {
    const res = await api<{ total: number; data: Device[] }>('/devices', { query: { page, page_size: pageSize, is_online: isOnline } });
    return { devices: res.data.data, total: res.data.total, next: null };
  }
  const options = cursorPath
    ? await api<Array<[string, string]>>(cursorPath)
    : await api<Array<[string, string]>>('/v1/devices/options', { query: { q, limit: pageSize } });
  if (options.data.length === 0) return { devices: [], total: options.total, next: null };
  const ids = options.data.map(([, id]) => id).join(',');
  const details = await api<{ total: number; data: Device[] }>('/devices', { query: { ids, page_size: pageSize, is_online: isOnline } });
  // The dropdown's order (by name), not the list's.
  const byId = new Map(details.data.data.map((d) => [d.id.toLowerCase(), d]));
  const devices = options.data.map(([, id]) => byId.get(id.toLowerCase())).filter((d): d is Device => d !== undefined);
  return { devices, total: options.total, next: options.next };
}

export function DeviceList({ onLoaded }: { onLoaded?: () => void }) {
  const [q, setQ] = useState('');
  const [typed, setTyped] = useState('');
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  // Search pages: the cursors that led to each page so far, so "Previous" can go back.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [now, setNow] = useState(Date.now());
  const list = useApi(() => loadPage(q, status, page, cursors[page - 1] ?? null), [q, status, page]);

  useEffect(() => {
    if (!list.loading) onLoaded?.();
  }, [list.loading]);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 10_000);
    return () => clearInterval(timer);
  }, []);
  // Searches go out once typing pauses, not on every key.
  useEffect(() => {
    const timer = setTimeout(() => {
      if (typed.trim() !== q) {
        setQ(typed.trim());
        setPage(1);
        setCursors([null]);
      }
    }, 300);
    return () => clearTimeout(timer);
  }, [typed]);

  const data = list.data;
  const pages = !q && data?.total !== null && data?.total !== undefined ? Math.max(1, Math.ceil(data.total / pageSize)) : null;
  const hasNext = q ? Boolean(data?.next) : pages !== null && page < pages;
  const goNext = () => {
    if (q && data?.next) setCursors((c) => [...c.slice(0, page), data.next]);
    setPage(page + 1);
  };

  return (
    <section aria-labelledby="device-list-title">
      <h2 id="device-list-title">Device list</h2>
      <form role="search" class="grid" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search by name
          <input type="search" name="q" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} placeholder="e.g. counter" />
        </label>
        <label>
          Status
          <select
            name="status"
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              setPage(1);
              setCursors([null]);
            }}
          >
            <option value="">All</option>
            <option value="online">Online</option>
            <option value="offline">Offline</option>
          </select>
        </label>
      </form>
      <ErrorMessage error={list.error} />
      <div class="overflow-auto" aria-busy={list.loading}>
        <table class="striped" data-testid="device-table">
          <caption class="muted">
            {data
              ? `${count(data.total)} ${q ? 'matching' : ''} device${data.total === 1 ? '' : 's'}${pages ? ` · page ${count(page)} of ${count(pages)}` : ` · page ${page}`}`
              : 'Loading devices…'}
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Id</th>
              <th scope="col">Status</th>
              <th scope="col">Last heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {data?.devices.map((d) => (
              <tr key={d.id}>
                <td>{d.name}</td>
                <td>
                  <code>{d.id}</code>
                </td>
                <td>
                  <span class={`badge badge-${d.is_online ? 'online' : 'offline'}`}>{d.is_online ? 'online' : 'offline'}</span>
                </td>
                <td title={when(d.last_heartbeat_at)}>{age(d.last_heartbeat_at, now)}</td>
              </tr>
            ))}
            {data && data.devices.length === 0 && (
              <tr>
                <td colSpan={4}>No devices match.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" class="secondary" disabled={page === 1 || list.loading} onClick={() => setPage(page - 1)}>
          Previous page
        </button>
        <button type="button" class="secondary" disabled={!hasNext || list.loading} onClick={goNext}>
          Next page
        </button>
      </div>
    </section>
  );
}
