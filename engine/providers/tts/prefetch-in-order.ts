export interface PrefetchOptions {
  /** Tasks started and not yet handed to the consumer, at most. */
  ahead: number;
  /** Ends the output at once; tasks still running are left to finish and their results dropped. */
  signal: AbortSignal;
}

/**
 * Starts a task for each item of `source` as soon as the item arrives (while the consumer is
 * still busy with earlier results) and yields the results in source order. `start` may return
 * undefined to skip an item. Lets a TTS provider synthesize the next sentence while the
 * previous one is being played, without taking more than `ahead` places in a shared queue.
 * A failing task or source fails the output once the results before it have been yielded.
 */
export async function* prefetchInOrder<T, R>(
  source: AsyncIterable<T>,
  start: (item: T) => Promise<R> | undefined,
  options: PrefetchOptions,
): AsyncGenerator<R> {
  const { ahead, signal } = options;
  const started: Promise<R>[] = [];
  let sourceDone = false;
  let sourceFailure: { error: unknown } | undefined;
  let stopped = false;
  // Resolved and replaced whenever either side moves, so the other can wait for it.
  let changed = deferred();
  const notify = () => {
    changed.resolve();
    changed = deferred();
  };

  const pump = async () => {
    try {
      for await (const item of source) {
        while (started.length >= ahead && !stopped) await changed.promise;
        if (stopped) return;
        const task = start(item);
        if (!task) continue;
        // Observed later by the consumer, or never if it stops first.
        task.catch(() => undefined);
        started.push(task);
        notify();
      }
    } catch (error) {
      sourceFailure = { error };
    } finally {
      sourceDone = true;
      notify();
    }
  };
  void pump();

  try {
    while (!signal.aborted) {
      const next = started[0];
      if (!next) {
        if (sourceFailure) throw sourceFailure.error;
        if (sourceDone) return;
        await untilAborted(changed.promise, signal);
        continue;
      }
      let result: { value: R } | undefined;
      try {
        result = await untilAborted(next.then((value) => ({ value })), signal);
      } catch (error) {
        // A task may fail because of the abort (its reason) just before the abort is seen here.
        if (signal.aborted) return;
        throw error;
      }
      if (!result) return;
      started.shift();
      notify();
      yield result.value;
    }
  } finally {
    stopped = true;
    notify();
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** `promise`'s value, or undefined as soon as `signal` aborts. */
async function untilAborted<V>(promise: Promise<V>, signal: AbortSignal): Promise<V | undefined> {
  if (signal.aborted) return undefined;
  let onAbort!: () => void;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
