import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api-client.js';

export type Resource<T> =
  | { state: 'loading'; reload: () => void }
  | { state: 'error'; error: ApiError; reload: () => void }
  | { state: 'ready'; data: T; reload: () => void };

/** Loads data for a page section; `deps` re-run it, `reload()` does on demand. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [result, setResult] = useState<{ state: 'loading' } | { state: 'error'; error: ApiError } | { state: 'ready'; data: T }>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  useEffect(() => {
    let current = true;
    // Keep the old data on screen while refreshing, so a reload does not flash an empty page.
    setResult((previous) => (previous.state === 'ready' ? previous : { state: 'loading' }));
    load().then(
      (data) => current && setResult({ state: 'ready', data }),
      (error: unknown) => current && setResult({ state: 'error', error: error instanceof ApiError ? error : new ApiError(String(error), 0, undefined) }),
    );
    return () => {
      current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, generation]);
  return { ...result, reload } as Resource<T>;
}
