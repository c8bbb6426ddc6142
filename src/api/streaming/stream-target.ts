/**
 * What `pods/NAME/exec` and `pods/NAME/attach` check before they upgrade, so a refusal is a plain
 * Status kubectl prints: the pod, the container (as asked, else the default one) and its running
 * attempt (the agent's runtime is streaming.ts's requireRuntime).
 */
import type { PodRow } from "../../store/queries.ts";
import type { V1Container, V1Pod } from "../../v1/v1.ts";
import type { ApiContext } from "../http/context.ts";
import { ApiError } from "../http/status.ts";

/** The annotation naming the container kubectl and the API default to. */
export const DEFAULT_CONTAINER_ANNOTATION = "kubectl.kubernetes.io/default-container";

/** The pod's row (its served object in `object`), or the API server's 404. */
export function findPod(api: ApiContext, namespace: string, name: string): PodRow {
  const pod = api.store.livePods({ namespace, name })[0];
  if (!pod) throw ApiError.notFound("pods", name);
  return pod;
}

/** The container asked for, else the default-container annotation's, else the first. */
export function chooseContainer(pod: V1Pod, asked: string | undefined): string {
  const names = everyContainer(pod).map((container) => container.name);
  const podName = pod.metadata?.name ?? "";
  if (asked !== undefined) {
    if (!names.includes(asked)) throw ApiError.badRequest(`container ${asked} is not valid for pod ${podName}`);
    return asked;
  }
  const annotated = pod.metadata?.annotations?.[DEFAULT_CONTAINER_ANNOTATION];
  if (annotated && names.includes(annotated)) return annotated;
  const first = pod.spec?.containers?.[0]?.name;
  if (!first) throw ApiError.badRequest(`pod ${podName} has no containers`);
  return first;
}

/** Every container a stream may reach, as the API server's podutil.VisitContainers walks them: app, init and ephemeral. */
function everyContainer(pod: V1Pod): V1Container[] {
  return [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []), ...(pod.spec?.ephemeralContainers ?? [])];
}

/** The container's spec as served (chooseContainer found it). */
export function containerSpec(pod: V1Pod, container: string): V1Container | undefined {
  return everyContainer(pod).find((candidate) => candidate.name === container);
}

/** The runtime id of the container's running attempt, from the status the agent recorded; else a 400 with `notRunning`. */
export function runningContainerId(pod: V1Pod, container: string, notRunning: string): string {
  const { status: served } = pod;
  const statuses = [...(served?.containerStatuses ?? []), ...(served?.initContainerStatuses ?? []), ...(served?.ephemeralContainerStatuses ?? [])];
  const status = statuses.find((candidate) => candidate.name === container);
  const id = status?.state?.running ? status.containerID?.split("://")[1] : undefined;
  if (!id) throw ApiError.badRequest(notRunning);
  return id;
}
