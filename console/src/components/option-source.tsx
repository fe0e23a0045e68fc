import { useEffect, useState } from 'preact/hooks';
import { api, type ApiError } from '../api';
import { count } from '../format';
import { toApiError } from '../use-api';
import { ErrorMessage } from './status';

export interface OptionSource {
  id: string;
  title: string;
  description?: string;
  path: string;
  params?: Array<{ name: string; title?: string; optionsFrom?: string }>;
}

type Tuple = [string, string];
const pageSize = 20;

/** The answer as JSON, one `[label, value]` tuple a line. */
function answerText(body: Tuple[]): string {
  return body.length === 0 ? '[]' : `[\n${body.map((t) => `  ${JSON.stringify(t)}`).join(',\n')}\n]`;
}

/** The source's path with its parameters filled in, or null while one is still unchosen. */
function fill(path: string, params: Record<string, string | undefined>): string | null {
  const relative = path.startsWith('http') ? new URL(path).pathname : path;
  let missing = false;
  const filled = relative.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const value = params[name];
    if (!value) missing = true;
    return encodeURIComponent(value ?? '');
  });
  return missing ? null : filled;
}

interface Props {
  source: OptionSource;
  params: Record<string, string | undefined>;
  paramTitles: Record<string, string | undefined>;
  onChoose: (value: string) => void;
}

export function OptionSourcePreview({ source, params, paramTitles, onChoose }: Props) {
  const path = fill(source.path, params);
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const [options, setOptions] = useState<Tuple[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [lastAnswer, setLastAnswer] = useState<{ request: string; body: Tuple[] } | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [busy, setBusy] = useState(false);
  const [value, setValue] = useState('');

  const load = async (from: string, append: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const answer = await api<Tuple[]>(from);
      setOptions((old) => (append ? [...old, ...answer.data] : answer.data));
      setTotal(answer.total);
      setNext(answer.next);
      setLastAnswer({ request: from, body: answer.data });
    } catch (err) {
      setError(toApiError(err));
      if (!append) setOptions([]);
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const timer = setTimeout(() => setQ(typed.trim()), 300);
    return () => clearTimeout(timer);
  }, [typed]);
  useEffect(() => {
    setValue('');
    if (!path) return;
    const query = new URLSearchParams({ limit: String(pageSize), ...(q ? { q } : {}) });
    void load(`${path}?${query}`, false);
  }, [path, q]);

  const choose = (v: string) => {
    setValue(v);
    onChoose(v);
  };
  const chosen = options.find(([, v]) => v === value);
  const selectId = `option-${source.id}`;
  const waitingFor = (source.params ?? []).filter((p) => !params[p.name]).map((p) => paramTitles[p.name] ?? p.name);

  return (
    <article aria-labelledby={`${selectId}-title`} data-testid={`source-${source.id}`}>
      <header>
        <h2 id={`${selectId}-title`}>{source.title}</h2>
        <small>
          <code>GET {source.path}</code>
          {source.description ? ` · ${source.description}` : ''}
        </small>
      </header>
      {waitingFor.length > 0 ? (
        <p>Choose a {waitingFor.join(' and ')} above first: this dropdown follows it.</p>
      ) : (
        <div class="grid">
          <div>
            <label>
              Search {source.title.toLowerCase()}s
              <input type="search" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
            </label>
            <label for={selectId}>{source.title}</label>
            <select id={selectId} size={8} value={value} onChange={(e) => choose(e.currentTarget.value)} aria-busy={busy}>
              {options.map(([label, v]) => (
                <option key={v} value={v}>
                  {label}
                </option>
              ))}
            </select>
            <p class="muted">
              {count(options.length)} shown of {count(total)}
            </p>
            <ErrorMessage error={error} />
            <button type="button" class="secondary" disabled={!next || busy} onClick={() => next && load(next, true)}>
              Load more
            </button>
            {chosen && (
              <p role="status">
                Chosen: <strong>{chosen[0]}</strong> → value <code>{chosen[1]}</code>
              </p>
            )}
          </div>
          <div>
            <p>
              The answer to <code>{lastAnswer?.request ?? '…'}</code>
            </p>
            <pre class="answer" tabIndex={0} aria-label={`${source.title} answer`}>
              {lastAnswer ? answerText(lastAnswer.body) : ''}
            </pre>
          </div>
        </div>
      )}
    </article>
  );
}
