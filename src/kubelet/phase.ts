/**
 * The pod phase by the kubelet's rule (getPhase in pkg/kubelet/kubelet_pods.go): a container waiting
 * to be restarted counts as stopped, not waiting, so a crash-looping pod under Always stays Running.
 */
import type { ContainerRecord, PodPhase, PodRecord } from "./pod-state.ts";

function hasStopped(container: ContainerRecord): boolean {
  return container.state === "terminated" || (container.state === "waiting" && container.lastTermination !== undefined);
}

function lastExitCode(container: ContainerRecord): number | undefined {
  return (container.terminated ?? container.lastTermination)?.exitCode;
}

/**
 * `terminal`: the pod is gone for good (removed, replaced, stopped at shutdown), so nothing will
 * restart: once every container has stopped, the phase is Succeeded or Failed whatever the restart
 * policy, as getPhase decides for a terminal pod. The kubelet leaves static pods out (its
 * TODO #116484: their mirror pod is deleted anyway); here a file pod's last status is the history
 * `describe` shows, so it ends the same way.
 */
export function podPhase(pod: PodRecord, options: { terminal?: boolean } = {}): PodPhase {
  if (pod.rejected || pod.evicted) return "Failed";
  let pendingInit = 0;
  let pendingSidecars = 0;
  let failedInit = 0;
  for (const container of pod.init) {
    if (container.kind === "sidecar") {
      if (!(container.state === "running" && container.started)) pendingSidecars++;
      continue;
    }
    if (container.state === "running") pendingInit++;
    else if (hasStopped(container)) {
      if (lastExitCode(container) !== 0) failedInit++;
      else if (container.state !== "terminated") pendingInit++;
    } else pendingInit++;
  }

  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const container of pod.app) {
    if (container.state === "running") running++;
    else if (hasStopped(container)) {
      stopped++;
      if (lastExitCode(container) === 0) succeeded++;
    } else waiting++;
  }

  if (failedInit > 0 && pod.spec.restartPolicy === "Never") return "Failed";
  // Once initialized, a sidecar restarting later does not send the pod back to Pending.
  if (!pod.initialized && (pendingInit > 0 || failedInit > 0 || pendingSidecars > 0)) return "Pending";
  if (waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (options.terminal) return stopped === succeeded ? "Succeeded" : "Failed";
    if (pod.spec.restartPolicy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (pod.spec.restartPolicy === "Never") return "Failed";
    return "Running";
  }
  return "Pending";
}

/** Succeeded and Failed are final: nothing is restarted and the sidecars are stopped. */
export function isTerminalPhase(phase: PodPhase): boolean {
  return phase === "Succeeded" || phase === "Failed";
}
