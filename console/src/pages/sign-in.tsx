import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { ErrorMessage } from '../components/status';
import { signIn, signOutReason, type Role, type Session } from '../session';
import { toApiError } from '../use-api';

interface Me {
  key: { name?: string; scopes: string[] | null };
  account: { name: string } | null;
}

/** Checks the key (`GET /v1/me`) or the operator token (`GET /admin/v1/queue`) before keeping it. */
async function check(role: Role, secret: string): Promise<Session> {
  const candidate: Session = { role, secret, label: '' };
  if (role === 'owner') {
    const me = (await api<Me>('/v1/me', { as: candidate })).data;
    return { ...candidate, label: me.account ? `${me.account.name}${me.key.name ? ` · ${me.key.name}` : ''}` : 'Upstream key' };
  }
  try {
    await api('/admin/v1/queue', { as: candidate });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) throw new ApiError(404, 'The operator API is off on this connector: start it with ADMIN_TOKEN set');
    throw err;
  }
  return { ...candidate, label: 'Operator' };
}

export function SignIn() {
  const [role, setRole] = useState<Role>('owner');
  const [secret, setSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      signIn(await check(role, secret.trim()));
    } catch (err) {
      setError(toApiError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="container narrow">
      <h1>Signage connector console</h1>
      <p>
        Sign in with an API key to see its devices, dropdowns and webhooks, or with the connector's <code>ADMIN_TOKEN</code> to manage accounts, keys and the
        delivery queue. It is kept in this tab only, until you sign out or close it.
      </p>
      {signOutReason.value && (
        <p role="status" class="notice">
          {signOutReason.value}
        </p>
      )}
      <form onSubmit={submit}>
        <fieldset>
          <legend>Sign in as</legend>
          <label>
            <input type="radio" name="role" value="owner" checked={role === 'owner'} onChange={() => setRole('owner')} />A key's owner (API key)
          </label>
          <label>
            <input type="radio" name="role" value="operator" checked={role === 'operator'} onChange={() => setRole('operator')} />
            Operator (ADMIN_TOKEN)
          </label>
        </fieldset>
        <label>
          {role === 'owner' ? 'API key' : 'Admin token'}
          <input type="password" name="secret" autoComplete="off" required value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
        </label>
        <ErrorMessage error={error} />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
