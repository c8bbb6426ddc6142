/**
 * The kubelet's convertToKubeContainerStatus for an exited container, the part its status needs a
 * read for: with terminationMessagePolicy FallbackToLogsOnError, a container that failed (a
 * non-zero exit) and left its termination message file empty, or had none, gets the end of its
 * log as the message. The file's own message comes with the runtime's status (terminationOf).
 */
import type { ContainerSpec } from "../manifest/types.ts";
import type { ContainerManager, ContainerStatus } from "../runtime/runtime.ts";
import { MAX_TERMINATION_MESSAGE_LOG_LINES, tailOfLog } from "../runtime/termination-message.ts";

export async function fallbackTerminationMessage(runtime: Pick<ContainerManager, "readLogs">, spec: ContainerSpec, status: ContainerStatus): Promise<string | undefined> {
  if (status.state !== "exited" || spec.terminationMessagePolicy !== "FallbackToLogsOnError") return undefined;
  if ((status.exitCode ?? 0) === 0 || status.terminationMessage) return undefined;
  try {
    return tailOfLog(await runtime.readLogs(status.id, { tail: MAX_TERMINATION_MESSAGE_LOG_LINES })) || undefined;
  } catch (error) {
    return `Error on reading termination message from logs: ${(error as Error).message}`;
  }
}
