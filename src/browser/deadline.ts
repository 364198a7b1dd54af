/**
 * Waiting for a promise at most so long, without leaving timers behind. Used wherever
 * the host talks to a page that may be hung: the late promise is left to settle on
 * its own (its rejection is observed, never unhandled). A wait whose answer no longer
 * matters (its page died) is cancelled through `cancel`: its timer is cleared at once,
 * so a process never lingers on a timer for a page that is gone.
 */
export type Settled<T> = { status: "done"; value: T } | { status: "failed"; error: unknown } | { status: "timed-out" } | { status: "cancelled" };

export async function settleWithin<T>(work: Promise<T>, ms: number, options: { cancel?: AbortSignal } = {}): Promise<Settled<T>> {
  let timer: NodeJS.Timeout | undefined;
  let onCancel: (() => void) | undefined;
  const timedOut = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ status: "timed-out" }), ms);
    onCancel = () => resolve({ status: "cancelled" });
    if (options.cancel?.aborted) onCancel();
    else options.cancel?.addEventListener("abort", onCancel, { once: true });
  });
  const settled = work.then(
    (value): Settled<T> => ({ status: "done", value }),
    (error: unknown): Settled<T> => ({ status: "failed", error }),
  );
  try {
    return await Promise.race([settled, timedOut]);
  } finally {
    clearTimeout(timer);
    if (onCancel) options.cancel?.removeEventListener("abort", onCancel);
  }
}
