import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorMessage, Loading } from '../components/status';
import { AccountKeys } from '../components/account-keys';
import { count } from '../format';
import { useApi } from '../use-api';

interface Account {
  id: string;
  name: string;
  users: number;
  keys: number;
}

interface Queue {
  origins: Array<{ target_origin: string; pending: number; waiting: number; dead: number; oldest_due_age_ms: number }>;
  poller: { watched_keys: number; overdue_keys: number; oldest_overdue_ms: number; paused_keys: number };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** `GET /admin/v1/queue`: the poller's lag and each target origin's deliveries. */
function QueueHealth() {
  const queue = useApi(() => api<Queue>('/admin/v1/queue').then((a) => a.data), []);
  const q = queue.data;
  return (
    <section aria-labelledby="queue-title" data-testid="queue">
      <h2 id="queue-title">Queue and poller</h2>
      <ErrorMessage error={queue.error} />
      {queue.loading && !q && <Loading what="queue health" />}
      {q && (
        <>
          <div class="grid counts">
            <article>
              <h3>Watched keys</h3>
              <p class="big" data-testid="watched-keys">
                {count(q.poller.watched_keys)}
              </p>
            </article>
            <article>
              <h3>Overdue keys</h3>
              <p class="big">{count(q.poller.overdue_keys)}</p>
              <small>most overdue by {seconds(q.poller.oldest_overdue_ms)}</small>
            </article>
            <article>
              <h3>Paused keys</h3>
              <p class="big">{count(q.poller.paused_keys)}</p>
            </article>
          </div>
          <div class="overflow-auto">
            <table class="striped" data-testid="origin-table">
              <caption class="muted">Deliveries per target origin, the busiest first</caption>
              <thead>
                <tr>
                  <th scope="col">Target origin</th>
                  <th scope="col">Pending</th>
                  <th scope="col">Waiting to retry</th>
                  <th scope="col">Dead</th>
                  <th scope="col">Oldest due for</th>
                </tr>
              </thead>
              <tbody>
                {q.origins.map((o) => (
                  <tr key={o.target_origin}>
                    <td>
                      <code>{o.target_origin}</code>
                    </td>
                    <td>{count(o.pending)}</td>
                    <td>{count(o.waiting)}</td>
                    <td>{count(o.dead)}</td>
                    <td>{seconds(o.oldest_due_age_ms)}</td>
                  </tr>
                ))}
                {q.origins.length === 0 && (
                  <tr>
                    <td colSpan={5}>No deliveries queued.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        </>
      )}
      <button type="button" class="secondary outline" onClick={() => queue.reload()}>
        Refresh
      </button>
    </section>
  );
}

const pageSize = 50;

export function OperatorPage() {
  const [cursor, setCursor] = useState<string | null>(null);
  const accounts = useApi(() => (cursor ? api<Account[]>(cursor) : api<Account[]>('/admin/v1/accounts', { query: { limit: pageSize } })), [cursor]);
  const [accountId, setAccountId] = useState('');
  const list = accounts.data?.data ?? [];
  return (
    <>
      <h1>Operator</h1>
      <QueueHealth />
      <section aria-labelledby="accounts-title">
        <h2 id="accounts-title">Accounts and keys</h2>
        <ErrorMessage error={accounts.error} />
        {accounts.loading && !accounts.data && <Loading what="accounts" />}
        <label for="account">Account</label>
        <select id="account" name="account" value={accountId} onChange={(e) => setAccountId(e.currentTarget.value)}>
          <option value="">Choose an account…</option>
          {list.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name} ({a.id}): {a.users} users, {a.keys} keys
            </option>
          ))}
        </select>
        {accounts.data?.next && (
          <button type="button" class="secondary outline" onClick={() => setCursor(accounts.data!.next)}>
            Next accounts
          </button>
        )}
        {accountId && <AccountKeys key={accountId} accountId={accountId} />}
      </section>
    </>
  );
}
