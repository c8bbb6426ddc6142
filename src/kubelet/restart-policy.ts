import type { RestartPolicy } from "../manifest/types.ts";
import type { ContainerRecord } from "./pod-state.ts";

/** Always restarts every exit, OnFailure only a non-zero one, Never none. */
export function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  switch (policy) {
    case "Always":
      return true;
    case "OnFailure":
      return exitCode !== 0;
    case "Never":
      return false;
  }
}

/** Sidecars restart whatever the pod's policy (KEP-753); everything else follows the pod. */
export function containerShouldRestart(policy: RestartPolicy, container: ContainerRecord, exitCode: number): boolean {
  return container.kind === "sidecar" ? true : shouldRestart(policy, exitCode);
}
