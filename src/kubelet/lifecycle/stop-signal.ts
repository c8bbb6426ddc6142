/**
 * Which signal stops a container gracefully (KEP-4960): the spec's `lifecycle.stopSignal`, else
 * what the runtime reported for the attempt (docker: the image's STOPSIGNAL), else SIGTERM. Every
 * stop (deletion, liveness and startup failures, a changed definition, the agent's shutdown) sends it
 * first; SIGKILL follows when the grace runs out, whatever the stop signal was.
 */
import { DEFAULT_STOP_SIGNAL, type SignalName } from "../../manifest/signals.ts";
import type { ContainerRecord } from "../pod-state.ts";

export function stopSignalOf(container: Pick<ContainerRecord, "spec" | "stopSignal">): SignalName {
  return container.spec.stopSignal ?? container.stopSignal ?? DEFAULT_STOP_SIGNAL;
}
