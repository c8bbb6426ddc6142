import type { Clock } from "../src/clock.ts";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that moves only when a test steps it. Timers due within a step fire in time order,
 * each seeing `now()` at its own due time, so a step of 30s behaves like 30s of real waiting.
 */
export class FakeClock implements Clock {
  private current: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): () => void {
    const timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Advances by `ms`, firing every timer that falls due on the way. */
  step(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = end;
  }

  /** Seconds-based convenience for tests that read like the kubelet's numbers. */
  stepSeconds(seconds: number): void {
    this.step(seconds * 1000);
  }

  pendingTimers(): number {
    return this.timers.length;
  }

  /** When the earliest armed timer falls due, if any. */
  nextDueAt(): number | undefined {
    return this.timers.reduce<number | undefined>((min, t) => (min === undefined || t.at < min ? t.at : min), undefined);
  }
}

/**
 * Advances `clock` by `ms` one due timer at a time, letting async work settle (`settle`, usually
 * `kubelet.idle()`) after each, so what a timer triggers runs at that timer's time, not at the end.
 */
export async function advance(clock: FakeClock, ms: number, settle: () => Promise<void>): Promise<void> {
  const end = clock.now() + ms;
  await settle();
  for (;;) {
    const next = clock.nextDueAt();
    if (next === undefined || next > end) break;
    clock.step(Math.max(0, next - clock.now()));
    await settle();
  }
  clock.step(end - clock.now());
  await settle();
}
