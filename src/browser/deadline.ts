/**
 * Waiting for a promise at most so long, without leaving timers behind. Used wherever
 * the host talks to a page that may be hung: the late promise is left to settle on
 * its own (its rejection is observed, never unhandled).
 */
export type Settled<T> = { status: "done"; value: T } | { status: "failed"; error: unknown } | { status: "timed-out" };

export async function settleWithin<T>(work: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ status: "timed-out" }), ms);
  });
  const settled = work.then(
    (value): Settled<T> => ({ status: "done", value }),
    (error: unknown): Settled<T> => ({ status: "failed", error }),
  );
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
