import { useState } from 'preact/hooks';
import { api } from '../api';
import { Badge, ErrorMessage, Loading } from '../components/status';
import { CreateHook } from '../components/create-hook';
import { HookDetail, type Hook } from '../components/hook-detail';
import { when } from '../format';
import { useApi } from '../use-api';
import { Pager, useCursorPages } from '../components/pager';

const pageSize = 20;

/** The key's hooks, a page at a time (`GET /v1/hooks?limit=`, `Link` for the next), and one opened below. */
export function WebhooksPage() {
  const pages = useCursorPages();
  const [openId, setOpenId] = useState<string | null>(null);
  const hooks = useApi(() => {
    const from = pages.cursor;
    return from ? api<Hook[]>(from) : api<Hook[]>('/v1/hooks', { query: { limit: pageSize } });
  }, [pages.page, pages.cursor]);
  const refresh = () => hooks.reload();
  const open = hooks.data?.data.find((h) => h.id === openId) ?? null;

  return (
    <>
      <h1>Webhooks</h1>
      <CreateHook
        onCreated={(hook) => {
          setOpenId(hook.id);
          pages.reset();
          hooks.reload();
        }}
      />
      <section aria-labelledby="hooks-title">
        <h2 id="hooks-title">Hooks</h2>
        <ErrorMessage error={hooks.error} />
        {hooks.loading && !hooks.data && <Loading what="hooks" />}
        {hooks.data && (
          <div class="overflow-auto">
            <table class="striped" data-testid="hook-table">
              <caption class="muted">{hooks.data.total ?? hooks.data.data.length} hook(s) in all</caption>
              <thead>
                <tr>
                  <th scope="col">Target</th>
                  <th scope="col">Events</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span class="visually-hidden">Open</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {hooks.data.data.map((h) => (
                  <tr key={h.id} aria-selected={h.id === openId}>
                    <td>
                      <code>{h.target_url}</code>
                    </td>
                    <td>{h.events.join(', ')}</td>
                    <td>
                      <Badge value={h.status} />
                      {h.status_reason && <small class="muted"> {h.status_reason}</small>}
                    </td>
                    <td>{when(h.created_at)}</td>
                    <td>
                      <button type="button" class="secondary outline" onClick={() => setOpenId(h.id)} aria-label={`Open hook ${h.target_url}`}>
                        Open
                      </button>
                    </td>
                  </tr>
                ))}
                {hooks.data.data.length === 0 && (
                  <tr>
                    <td colSpan={5}>No hooks yet: create one above.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </div>
        )}
        <Pager pages={pages} next={hooks.data?.next} noun="hooks" />
      </section>
      {open && (
        <HookDetail
          key={open.id}
          hook={open}
          onChanged={refresh}
          onDeleted={() => {
            setOpenId(null);
            refresh();
          }}
        />
      )}
    </>
  );
}
