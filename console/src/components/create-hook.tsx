import { useState } from 'preact/hooks';
import { api } from '../api';
import { useAction } from '../use-api';
import { ErrorMessage } from './status';
import { ShownOnce } from './shown-once';
import type { Hook } from './hook-detail';

const eventChoices = [
  { type: 'device.offline', note: 'a screen went offline' },
  { type: 'device.online', note: 'a screen came back' },
  { type: 'hook.disabled', note: 'another hook of this key was disabled' },
  { type: 'delivery.dead', note: 'a delivery of another hook ran out of retries' },
];

/** `POST /v1/hooks`; the signing secret in the answer is shown here once. */
export function CreateHook({ onCreated }: { onCreated: (hook: Hook) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['device.offline', 'device.online']);
  const create = useAction(async () => {
    const res = await api<Hook & { secret: string }>('/v1/hooks', { method: 'POST', body: { target_url: url.trim(), events } });
    onCreated(res.data);
    return { secret: res.data.secret, created: res.status === 201 };
  });
  const toggle = (type: string, on: boolean) => setEvents((list) => (on ? [...list, type] : list.filter((t) => t !== type)));
  return (
    <details open>
      <summary>Create a hook</summary>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void create.run();
        }}
      >
        <label>
          Target URL
          <input
            type="url"
            name="target_url"
            required
            placeholder="https://example.com/hooks/signage"
            value={url}
            onInput={(e) => setUrl(e.currentTarget.value)}
          />
        </label>
        <fieldset>
          <legend>Events</legend>
          {eventChoices.map((c) => (
            <label key={c.type}>
              <input type="checkbox" name="events" value={c.type} checked={events.includes(c.type)} onChange={(e) => toggle(c.type, e.currentTarget.checked)} />
              <code>{c.type}</code> <small class="muted">{c.note}</small>
            </label>
          ))}
        </fieldset>
        <ErrorMessage error={create.error} />
        <button type="submit" aria-busy={create.busy} disabled={create.busy}>
          Create hook
        </button>
      </form>
      {create.result && (
        <ShownOnce
          label={create.result.created ? 'Signing secret of the new hook' : 'That hook already existed (opened below); its signing secret'}
          value={create.result.secret}
        />
      )}
    </details>
  );
}
