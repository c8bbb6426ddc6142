/**
 * The schedule and the counters of one probe of one container: what the kubelet's probe worker
 * (pkg/kubelet/prober/worker.go) keeps per (pod, container, probe type), minus the goroutine.
 * The sync loop asks `due()` / `nextDueAt()`, calls `start()` when it launches the probe, and
 * `record()` (or `discard()`) when the probe settles. Pure: no timers, no I/O; time comes in as
 * arguments so a FakeClock drives it in tests.
 */
import type { Probe, ProbeKind } from "../manifest/types.ts";

/** The result the kubelet's results manager holds for this probe ("unknown" until decided). */
export type ProbeVerdict = "success" | "failure" | "unknown";

/** The counters a restarted agent needs to carry on where it left off (plain JSON). */
export interface ProbeTrackerSnapshot {
  /** The last result recorded, or undefined before the first one. */
  lastResult?: "success" | "failure";
  /** How many times in a row `lastResult` came back. */
  resultRun: number;
  verdict: ProbeVerdict;
  /** True after a liveness/startup failure verdict, until a new container attempt appears. */
  onHold: boolean;
  /** Epoch ms when the last probe run started. */
  lastRunStartedAt?: number;
}

/**
 * The value a probe reports before it has run on a container, as the kubelet seeds its results
 * manager: a readiness probe starts not-ready, a liveness probe starts alive (so a slow
 * initialDelaySeconds never kills), a startup probe starts undecided.
 */
export function initialVerdict(kind: ProbeKind): ProbeVerdict {
  switch (kind) {
    case "readiness":
      return "failure";
    case "liveness":
      return "success";
    case "startup":
      return "unknown";
  }
}

export class ProbeTracker {
  private lastResult: "success" | "failure" | undefined;
  private resultRun = 0;
  private onHold = false;
  private lastRunStartedAt: number | undefined;
  private currentVerdict: ProbeVerdict;
  private running = false;

  constructor(
    readonly kind: ProbeKind,
    readonly probe: Probe,
  ) {
    this.currentVerdict = initialVerdict(kind);
  }

  /** The result as the loop should apply it (Ready, started, alive). */
  get verdict(): ProbeVerdict {
    return this.currentVerdict;
  }

  /** True between `start()` and `record()` / `discard()`: the probe must not be started again. */
  get inFlight(): boolean {
    return this.running;
  }

  /**
   * True after a liveness or startup failure verdict: the container is about to be killed, and
   * the kubelet stops probing it until a new container appears (probing a dying container races
   * its teardown, kubernetes#21751). `newContainer()` lifts it.
   */
  get held(): boolean {
    return this.onHold;
  }

  /**
   * Whether the probe should run now on a container that started at `containerStartedAt`:
   * not before initialDelaySeconds have passed since the start, not while a run is in flight or on
   * hold, and then once every periodSeconds counted from the start of the previous run.
   */
  due(now: number, containerStartedAt: number): boolean {
    const at = this.nextDueAt(containerStartedAt);
    return at !== undefined && now >= at;
  }

  /**
   * The epoch ms at which the probe next becomes due, so the loop can arm a single timer.
   * Undefined while a run is in flight (re-ask after it settles) or while on hold.
   */
  nextDueAt(containerStartedAt: number): number | undefined {
    if (this.running || this.onHold) return undefined;
    const afterDelay = containerStartedAt + this.probe.initialDelaySeconds * 1000;
    // A run that started before this container did belongs to a previous attempt: it does not
    // push the first probe of the new attempt back.
    if (this.lastRunStartedAt === undefined || this.lastRunStartedAt < containerStartedAt) return afterDelay;
    return Math.max(afterDelay, this.lastRunStartedAt + this.probe.periodSeconds * 1000);
  }

  /** Marks a run as launched at `now`; the period of the next run counts from here. */
  start(now: number): void {
    this.running = true;
    this.lastRunStartedAt = now;
  }

  /**
   * Counts one probe result and returns the verdict once its threshold is reached, else undefined.
   * Like the kubelet, the run keeps counting past the threshold, so a readiness probe that keeps
   * failing returns "failure" on every further run; an opposite result starts a new run of 1.
   * A liveness or startup failure verdict puts the tracker on hold and zeroes the run, so the
   * next container attempt needs failureThreshold fresh failures.
   */
  record(ok: boolean, now: number): "success" | "failure" | undefined {
    this.running = false;
    this.lastRunStartedAt ??= now;
    const result = ok ? "success" : "failure";
    if (this.lastResult === result) {
      this.resultRun++;
    } else {
      this.lastResult = result;
      this.resultRun = 1;
    }
    const threshold = ok ? this.probe.successThreshold : this.probe.failureThreshold;
    if (this.resultRun < threshold) return undefined;
    this.currentVerdict = result;
    if (!ok && this.kind !== "readiness") {
      this.onHold = true;
      this.resultRun = 0;
    }
    return result;
  }

  /**
   * Ends an in-flight run without counting it: the kubelet throws away a probe that errored
   * (as opposed to failed), e.g. an exec into a container the runtime no longer has.
   */
  discard(): void {
    this.running = false;
  }

  /**
   * A new container attempt replaced the probed one: the verdict goes back to the kind's initial
   * value and probing resumes. The consecutive-result counters carry over, as in the kubelet.
   */
  newContainer(): void {
    this.onHold = false;
    this.running = false;
    this.currentVerdict = initialVerdict(this.kind);
  }

  snapshot(): ProbeTrackerSnapshot {
    return {
      ...(this.lastResult === undefined ? {} : { lastResult: this.lastResult }),
      resultRun: this.resultRun,
      verdict: this.currentVerdict,
      onHold: this.onHold,
      ...(this.lastRunStartedAt === undefined ? {} : { lastRunStartedAt: this.lastRunStartedAt }),
    };
  }

  /** Rebuilds a tracker from `snapshot()`; a run in flight when the agent died is not resumed. */
  static restore(kind: ProbeKind, probe: Probe, snapshot: ProbeTrackerSnapshot): ProbeTracker {
    const tracker = new ProbeTracker(kind, probe);
    tracker.lastResult = snapshot.lastResult;
    tracker.resultRun = snapshot.resultRun;
    tracker.currentVerdict = snapshot.verdict;
    tracker.onHold = snapshot.onHold;
    tracker.lastRunStartedAt = snapshot.lastRunStartedAt;
    return tracker;
  }
}
