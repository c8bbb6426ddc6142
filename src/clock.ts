/**
 * Time, behind an interface, so the loop, back-off and probes can be stepped by a fake clock in tests.
 * This is the only module that reads the wall clock or arms a timer.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Calls `fn` once, `ms` from now. Returns a function that cancels the call (a no-op once it ran). */
  setTimeout(fn: () => void, ms: number): () => void;
}

/** The longest delay one JavaScript timer holds: past it the delay overflows 32 bits and fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    // A longer delay (a watch's timeoutSeconds of 2,147,484 or more) is armed in parts.
    let timer: ReturnType<typeof setTimeout>;
    const arm = (left: number) => {
      timer = setTimeout(() => (left > MAX_TIMER_MS ? arm(left - MAX_TIMER_MS) : fn()), Math.min(left, MAX_TIMER_MS));
    };
    arm(Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};

/** Resolves after `ms` on `clock`, or rejects with the signal's reason once `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
