/**
 * The pod phase by the kubelet's rule (getPhase in pkg/kubelet/kubelet_pods.go, 1.35): a container
 * waiting to be restarted counts as stopped, not waiting, so a crash-looping pod under Always stays
 * Running. Whether a stopped container will restart is each container's own decision (its rules,
 * its policy, else the pod's: restart-policy.ts), so a pod under Never whose container exits with
 * a code a rule restarts stays Running, and one under Always whose containers all stopped for good
 * ends Succeeded or Failed.
 */
import type { ContainerRecord, PodPhase, PodRecord } from "../pod-state.ts";
import { reportedState } from "../lifecycle/post-start.ts";
import { containerShouldRestart } from "../restart-policy.ts";

function hasStopped(container: ContainerRecord): boolean {
  const state = reportedState(container);
  return state === "terminated" || (state === "waiting" && container.lastTermination !== undefined);
}

function isRunning(container: ContainerRecord): boolean {
  return reportedState(container) === "running";
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
      if (!(isRunning(container) && container.started)) pendingSidecars++;
      continue;
    }
    if (isRunning(container)) pendingInit++;
    else if (hasStopped(container)) {
      const code = lastExitCode(container) ?? 0;
      // A failed init container that will run again only holds the pod in Pending.
      if (code !== 0 && !containerShouldRestart(pod.spec.restartPolicy, container, code)) failedInit++;
      else if (code !== 0 || container.state !== "terminated") pendingInit++;
    } else pendingInit++;
  }

  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  let stoppedForGood = 0;
  for (const container of pod.app) {
    if (isRunning(container)) running++;
    else if (hasStopped(container)) {
      stopped++;
      const code = lastExitCode(container) ?? 0;
      if (code === 0) succeeded++;
      if (!containerShouldRestart(pod.spec.restartPolicy, container, code)) stoppedForGood++;
    } else waiting++;
  }

  if (failedInit > 0) return "Failed";
  // Once initialized, a sidecar restarting later does not send the pod back to Pending.
  if (!pod.initialized && (pendingInit > 0 || failedInit > 0 || pendingSidecars > 0)) return "Pending";
  if (waiting > 0) return "Pending";
  if (running > 0) return "Running";
  if (stopped > 0) {
    if (options.terminal) return stopped === succeeded ? "Succeeded" : "Failed";
    // Some container will start again.
    if (stopped !== stoppedForGood) return "Running";
    return stopped === succeeded ? "Succeeded" : "Failed";
  }
  return "Pending";
}

/** Succeeded and Failed are final: nothing is restarted and the sidecars are stopped. */
export function isTerminalPhase(phase: PodPhase): boolean {
  return phase === "Succeeded" || phase === "Failed";
}
