import { useState } from 'preact/hooks';
import { api } from '../api';
import { ErrorMessage, Loading } from '../components/status';
import { ValueView } from '../components/value-table';
import { AccountKeys } from '../components/account-keys';
import { useApi } from '../use-api';

interface Account {
  id: string;
  name: string;
}

/** `GET /admin/v1/queue`: per target origin and the poller, refreshed every 15 s. */
function QueueHealth() {
  const queue = useApi(() => api<unknown>('/admin/v1/queue').then((a) => a.data), []);
  return (
    <section aria-labelledby="queue-title" data-testid="queue">
      <h2 id="queue-title">Queue and poller</h2>
      <ErrorMessage error={queue.error} />
      {queue.loading && !queue.data && <Loading what="queue health" />}
      {queue.data !== null && <ValueView value={queue.data} />}
      <button type="button" class="secondary outline" onClick={() => queue.reload()}>Refresh</button>
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
        <label>
          Account
          <select name="account" value={accountId} onChange={(e) => setAccountId(e.currentTarget.value)}>
            <option value="">Choose an account…</option>
            {list.map((a) => <option key={a.id} value={a.id}>{a.name} ({a.id})</option>)}
          </select>
        </label>
        {accounts.data?.next && (
          <button type="button" class="secondary outline" onClick={() => setCursor(accounts.data!.next)}>Next accounts</button>
        )}
        {accountId && <AccountKeys key={accountId} accountId={accountId} />}
      </section>
    </>
  );
}
