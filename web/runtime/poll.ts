// Live values the runtime cannot push (it has no status or readings stream): polled while mounted.
import { useEffect, useState } from 'preact/hooks';

/** How often statuses and readings are polled. */
export const POLL_MS = 500;

/** Calls `load` now and every POLL_MS while mounted; the latest result or error is shown. */
export function usePoll<T>(load: () => Promise<T>, deps: unknown[]): { value?: T; error?: string } {
  const [state, setState] = useState<{ value?: T; error?: string }>({});
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const tick = async () => {
      try {
        const value = await load();
        if (live) setState({ value });
      } catch (err) {
        if (live) setState((s) => ({ ...s, error: (err as Error).message }));
      }
      if (live) timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, deps);
  return state;
}
