/** Resolves after `ms`, or as soon as `signal` aborts (never rejects); leaves no listener on the signal. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    if (signal.aborted) return done();
    signal.addEventListener("abort", done, { once: true });
  });
}
