// Loading data for a page: the value, the error, a reload, and optional polling.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

/**
 * Runs `load()` now and whenever `deps` change; with `pollMs`, again every `pollMs` while
 * `shouldPoll(data)` holds and the tab is visible. A reload keeps the previous data on screen.
 */
export function useResource(load, deps = [], { pollMs = 0, shouldPoll = () => true } = {}) {
  const [state, setState] = useState({ data: undefined, error: null, loading: true, updatedAt: null });
  const generation = useRef(0);
  const latest = useRef(state);
  latest.current = state;

  const run = useCallback(async () => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    try {
      const data = await load();
      if (mine === generation.current) setState({ data, error: null, loading: false, updatedAt: new Date() });
    } catch (error) {
      if (mine === generation.current) setState((previous) => ({ ...previous, error, loading: false }));
    }
  }, deps);

  useEffect(() => {
    void run();
    return () => {
      generation.current++;
    };
  }, [run]);

  useEffect(() => {
    if (!pollMs) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState !== "visible" || latest.current.loading) return;
      if (latest.current.data !== undefined && !shouldPoll(latest.current.data)) return;
      void run();
    }, pollMs);
    return () => clearInterval(timer);
  }, [run, pollMs]);

  return { ...state, reload: run, setData: (data) => setState((previous) => ({ ...previous, data })) };
}
