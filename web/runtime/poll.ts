// Live values the runtime cannot push (it has no status or readings stream): polled while mounted.
import { useEffect, useState } from 'preact/hooks';

/** How often statuses and readings are polled. */
export const POLL_MS = 500;

/**
 * How long one poll may wait for its answer. A call that never answers (a connection that stalled) is
 * abandoned, its request dropped, and the next poll goes on; without it the value froze for good.
 */
export const POLL_TIMEOUT_MS = 5000;

/**
 * Calls `load` now and every POLL_MS while mounted; the latest result or error is shown. `load` gets the
 * signal that abandons its call: after POLL_TIMEOUT_MS, or when the component unmounts.
 */
export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): { value?: T; error?: string } {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    let current: AbortController | undefined;
    const tick = async () => {
      const call = (current = new AbortController());
      const deadline = setTimeout(() => call.abort(new DOMException(`${POLL_TIMEOUT_MS} ms`, 'TimeoutError')), POLL_TIMEOUT_MS);
      try {
        const value = await load(call.signal);
        if (live) setState({ value });
      } catch (err) {
        if (live) setState((s) => ({ ...s, error: (err as Error).message }));
      } finally {
        clearTimeout(deadline);
      }
      if (live) timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
      current?.abort(new DOMException('the view closed', 'AbortError'));
    };
  }, deps);
  return state;
}
