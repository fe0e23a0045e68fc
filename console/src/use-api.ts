import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` when `deps` change (and on `reload`); an answer that arrives after a newer
 * request started is dropped, so a fast typist never sees an older search's results.
 */
export function useApi<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, error: null, loading: false }),
      (err: unknown) => run === latest.current && setState({ data: null, error: toApiError(err), loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

export function toApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError(0, err instanceof Error ? err.message : String(err));
}

/** An action's state: running, and its error (the API's message) or its last result. */
export function useAction<A extends unknown[], R>(
  action: (...args: A) => Promise<R>,
): {
  run: (...args: A) => Promise<R | undefined>;
  busy: boolean;
  error: ApiError | null;
  result: R | null;
  clear: () => void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const [result, setResult] = useState<R | null>(null);
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      const value = await action(...args);
      setResult(value);
      return value;
    } catch (err) {
      setError(toApiError(err));
      setResult(null);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return {
    run,
    busy,
    error,
    result,
    clear: () => {
      setError(null);
      setResult(null);
    },
  };
}
