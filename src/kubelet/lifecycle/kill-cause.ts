/**
 * Why an attempt was killed, beside the reason Kubernetes shows. The kubelet reports a liveness
 * kill and a grace-period SIGKILL as reason Error (exit 143 or 137) and only an OOM kill
 * differently; the agent knows which it was, so it records the cause with the attempt (the
 * attempts table's kill_cause and grace_expired, the Exited event, describe's Attempts table)
 * and leaves the Kubernetes-visible reason exactly as the kubelet sets it.
 */
/** Why the agent stops a container: for the Killing event and for what follows (a liveness kill restarts, a pod removal does not). */
export type StopCause = "removed" | "replaced" | "shutdown" | "liveness" | "startup" | "completed" | "changed" | "resize" | "postStart" | "evicted";

/** oom: the kernel at the memory limit; otherwise why the agent stopped the container. */
export type KillCause = "oom" | StopCause;

/**
 * How an attempt that ended with `reason` was killed, given the stop the agent had under way:
 * the kernel's OOM kill wins over a stop in progress (it is what ended the process); a stop that
 * reached SIGKILL means the grace period ran out.
 */
export function killCauseOf(stopping: { cause: StopCause; stage: string } | undefined, reason: string): { killCause?: KillCause; graceExpired?: true } {
  // The runtimes read it from docker's State.OOMKilled or the cgroup's oom_kill counter.
  if (reason === "OOMKilled") return { killCause: "oom" };
  if (!stopping) return {};
  return stopping.stage === "sigkill" ? { killCause: stopping.cause, graceExpired: true } : { killCause: stopping.cause };
}

/**
 * What the Exited event adds to `exited with code N (Reason)`: the probe that failed, and a
 * SIGKILL at the end of the grace. An OOM kill says so in its reason; a plain stop in its Killing event.
 */
export function exitedSuffix(killCause: KillCause | undefined, graceExpired: boolean): string {
  const probe = killCause === "liveness" || killCause === "startup" ? ` after failing its ${killCause} probe` : "";
  return `${probe}${graceExpired ? ": killed with SIGKILL when its grace period ran out" : ""}`;
}

const CAUSE_WORDS: Record<KillCause, string> = {
  oom: "OOM",
  liveness: "liveness probe",
  startup: "startup probe",
  removed: "pod removed",
  replaced: "pod replaced",
  shutdown: "agent shutdown",
  completed: "pod completed",
  changed: "spec changed",
  resize: "resize",
  postStart: "postStart hook",
  evicted: "pod evicted",
};

/** describe's Attempts column: `liveness probe`, `pod removed, grace expired`, `OOM`; `-` when it ended on its own. */
export function killCauseWords(killCause: string | null | undefined, graceExpired: boolean): string {
  const words = killCause ? (CAUSE_WORDS[killCause as KillCause] ?? killCause) : undefined;
  if (!words) return graceExpired ? "grace expired" : "-";
  return graceExpired ? `${words}, grace expired` : words;
}
