/** Polls `probe` every 25 ms until it gives a truthy value, and resolves with it; fails naming `what` after `timeoutMs`. */
export async function untilValue<T>(what: string, probe: () => Promise<T | undefined | false | null> | T | undefined | false | null, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Polls `probe` every 25 ms until it is true; fails naming `what` after `timeoutMs`. */
export async function until(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
