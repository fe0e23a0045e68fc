import { useState } from 'preact/hooks';
import { api } from '../api';
import { when } from '../format';
import { useAction, useApi } from '../use-api';
import { Badge, ErrorMessage, Loading } from './status';
import { ShownOnce } from './shown-once';

interface User {
  id: string;
  name: string;
}

interface Key {
  id: string;
  name: string;
  user_id: string;
  scopes: string[];
  prefix?: string;
  created_at?: string;
  last_used_at?: string | null;
  expires_at?: string | null;
  revoked_at?: string | null;
  rate_limit_per_minute?: number | null;
  status?: string;
}

const allScopes = ['device:read', 'menu:read', 'hooks:write'];
const pageSize = 50;

/** One account's users and keys: create (shown once), roll (shown once), revoke. */
export function AccountKeys({ accountId }: { accountId: string }) {
  const users = useApi(() => api<User[]>('/admin/v1/users', { query: { account_id: accountId, limit: 500 } }).then((a) => a.data), [accountId]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const keys = useApi(
    () => (cursor ? api<Key[]>(cursor) : api<Key[]>('/admin/v1/keys', { query: { account_id: accountId, limit: pageSize } })),
    [accountId, cursor, version],
  );
  const [shown, setShown] = useState<{ label: string; key: string } | null>(null);
  const [graceSeconds, setGraceSeconds] = useState('3600');
  const [confirmRevoke, setConfirmRevoke] = useState<string | null>(null);

  const [userId, setUserId] = useState('');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['device:read']);
  const create = useAction(async () => {
    const res = await api<{ key: string; name?: string }>('/admin/v1/keys', { method: 'POST', body: { user_id: userId, scopes, name: name.trim() } });
    setShown({ label: `New key “${name.trim()}”`, key: res.data.key });
    setVersion((v) => v + 1);
    return null;
  });
  const roll = useAction(async (key: Key) => {
    const res = await api<{ key: string }>(`/admin/v1/keys/${encodeURIComponent(key.id)}/roll`, {
      method: 'POST',
      body: { grace_seconds: Number(graceSeconds) },
    });
    setShown({ label: `Rolled key “${key.name}” (the old one works for ${graceSeconds} s more)`, key: res.data.key });
    setVersion((v) => v + 1);
    return null;
  });
  const revoke = useAction(async (key: Key) => {
    await api(`/admin/v1/keys/${encodeURIComponent(key.id)}`, { method: 'DELETE' });
    setConfirmRevoke(null);
    setVersion((v) => v + 1);
    return null;
  });

  return (
    <>
      <ErrorMessage error={users.error ?? keys.error} />
      {shown && <ShownOnce label={shown.label} value={shown.key} />}
      <details>
        <summary>Create a key</summary>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void create.run();
          }}
        >
          <div class="grid">
            <label>
              User
              <select name="user_id" required value={userId} onChange={(e) => setUserId(e.currentTarget.value)}>
                <option value="">Choose a user…</option>
                {users.data?.map((u) => (
                  <option key={u.id} value={u.id}>
                    {u.name} ({u.id})
                  </option>
                ))}
              </select>
            </label>
            <label>
              Name
              <input name="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="e.g. Zapier" />
            </label>
          </div>
          <fieldset>
            <legend>Scopes</legend>
            {allScopes.map((s) => (
              <label key={s}>
                <input
                  type="checkbox"
                  name="scopes"
                  value={s}
                  checked={scopes.includes(s)}
                  onChange={(e) => setScopes((list) => (e.currentTarget.checked ? [...list, s] : list.filter((x) => x !== s)))}
                />
                <code>{s}</code>
              </label>
            ))}
          </fieldset>
          <ErrorMessage error={create.error} />
          <button type="submit" aria-busy={create.busy} disabled={create.busy}>
            Create key
          </button>
        </form>
      </details>
      <label>
        Grace period of a roll, in seconds
        <input type="number" name="grace_seconds" min={0} value={graceSeconds} onInput={(e) => setGraceSeconds(e.currentTarget.value)} />
      </label>
      <ErrorMessage error={roll.error ?? revoke.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data && (
        <div class="overflow-auto">
          <table class="striped" data-testid="key-table">
            <caption class="muted">{keys.data.total ?? keys.data.data.length} key(s)</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">User</th>
                <th scope="col">Scopes</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix ?? ''}</code>
                  </td>
                  <td>{k.user_id}</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{when(k.last_used_at ?? null)}</td>
                  <td>{when(k.expires_at ?? null)}</td>
                  <td>
                    <Badge value={k.status ?? (k.revoked_at ? 'revoked' : 'active')} />
                  </td>
                  <td>
                    <div class="actions">
                      {!k.revoked_at && (
                        <>
                          <button type="button" class="secondary" onClick={() => roll.run(k)} aria-label={`Roll key ${k.name}`}>
                            Roll
                          </button>
                          {confirmRevoke === k.id ? (
                            <button type="button" class="contrast" onClick={() => revoke.run(k)} aria-label={`Revoke key ${k.name} for good`}>
                              Revoke for good
                            </button>
                          ) : (
                            <button type="button" class="secondary outline" onClick={() => setConfirmRevoke(k.id)} aria-label={`Revoke key ${k.name}`}>
                              Revoke
                            </button>
                          )}
                        </>
                      )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {keys.data?.next && (
        <button type="button" class="secondary outline" onClick={() => setCursor(keys.data!.next)}>
          Next keys
        </button>
      )}
    </>
  );
}
