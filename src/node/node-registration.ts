/**
 * Registering the Node as the kubelet does (registerWithAPIServer, tryRegisterWithAPIServer in
 * pkg/kubelet/kubelet_node_status.go): create it, retrying with a back-off doubling from 100 ms to
 * 7 s until an attempt works; when it exists already (the agent ran before, or an admin made it),
 * get it and reconcile what the kubelet owns on an existing Node (the default labels, the
 * controller-managed attach/detach annotation, capacity and allocatable when missing) with one
 * status patch. The Node's uid, spec and other labels are the cluster's and stay.
 */
import { sleep, type Clock } from "../clock.ts";
import { cappedDoubling } from "../capped-doubling.ts";
import type { ApiReachability } from "./api-reachability.ts";
import { ClusterApiError, PATCH_TYPE, type ClusterApi } from "./cluster-client.ts";
import { nodeStatusPatch, type ClusterNode } from "./node-status.ts";

const REGISTER_BACKOFF_START_MS = 100;
const REGISTER_BACKOFF_CAP_MS = 7_000;

/** The labels the kubelet sets on registration and puts back on an existing Node (updateDefaultLabels). */
export const DEFAULT_LABELS = [
  "kubernetes.io/hostname",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/instance-type",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "node.kubernetes.io/windows-build",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
] as const;

/** volutil.ControllerManagedAttachAnnotation: the attach/detach controller, not the node, attaches volumes. */
export const CONTROLLER_MANAGED_ATTACH = "volumes.kubernetes.io/controller-managed-attach-detach";

export interface RegistrationOptions {
  client: ClusterApi;
  clock: Clock;
  reachability: ApiReachability;
  log: (message: string) => void;
  /** The Node to create, drawn anew for each attempt (its status is of that moment). */
  initialNode: () => ClusterNode;
  signal: AbortSignal;
}

/** Resolves with the Node as the API server holds it once registered; undefined if aborted first. */
export async function registerNode(options: RegistrationOptions): Promise<ClusterNode | undefined> {
  const { clock, signal } = options;
  for (let attempt = 1; !signal.aborted; attempt++) {
    const registered = await tryRegister(options);
    if (registered) return registered;
    await sleep(clock, cappedDoubling(REGISTER_BACKOFF_START_MS, REGISTER_BACKOFF_CAP_MS, attempt), signal).catch(() => {});
  }
  return undefined;
}

/** One attempt: the Node created, or the existing one reconciled; undefined when this attempt failed. */
export async function tryRegister(options: RegistrationOptions): Promise<ClusterNode | undefined> {
  const { client, reachability, log } = options;
  const node = options.initialNode();
  try {
    const created = await client.request<ClusterNode>({ method: "POST", path: "/api/v1/nodes", body: node, signal: options.signal });
    reachability.succeeded("POST nodes");
    log(`node ${node.metadata.name}: registered with the API server (uid ${created.metadata.uid})`);
    return created;
  } catch (error) {
    // Forbidden falls through as well: the node may be allowed to get what it may not create.
    if (!(error instanceof ClusterApiError && (error.alreadyExists || error.forbidden))) {
      reachability.failed("POST nodes", error);
      return undefined;
    }
    if (error.forbidden) reachability.failed("POST nodes", error);
  }
  let existing: ClusterNode;
  try {
    existing = await client.request<ClusterNode>({ method: "GET", path: `/api/v1/nodes/${node.metadata.name}`, signal: options.signal });
    reachability.succeeded("GET nodes");
  } catch (error) {
    reachability.failed("GET nodes", error);
    return undefined;
  }
  const reconciled = reconcileExisting(node, existing);
  if (reconciled === existing) {
    log(`node ${node.metadata.name}: registered before (uid ${existing.metadata.uid})`);
    return existing;
  }
  try {
    const patched = await client.request<ClusterNode>({ method: "PATCH", path: `/api/v1/nodes/${node.metadata.name}/status`, body: nodeStatusPatch(existing, reconciled), contentType: PATCH_TYPE.strategic, signal: options.signal });
    reachability.succeeded("PATCH nodes/status");
    log(`node ${node.metadata.name}: registered before (uid ${existing.metadata.uid}); its labels and resources reconciled`);
    return patched;
  } catch (error) {
    reachability.failed("PATCH nodes/status", error);
    return undefined;
  }
}

/**
 * The existing Node with the kubelet's reconciliations applied (updateDefaultLabels,
 * reconcileCMADAnnotationWithExistingNode, updateDefaultResources); `existing` itself when none changed anything.
 */
export function reconcileExisting(initial: ClusterNode, existing: ClusterNode): ClusterNode {
  const node = structuredClone(existing);
  let changed = false;
  const labels = (node.metadata.labels ??= {});
  for (const label of DEFAULT_LABELS) {
    const wanted = initial.metadata.labels?.[label];
    if (wanted === undefined) continue;
    if (labels[label] !== wanted) {
      labels[label] = wanted;
      changed = true;
    }
    if (labels[label] === "") delete labels[label];
  }
  const wantedAnnotation = initial.metadata.annotations?.[CONTROLLER_MANAGED_ATTACH];
  if ((node.metadata.annotations?.[CONTROLLER_MANAGED_ATTACH] ?? undefined) !== wantedAnnotation) {
    const annotations = (node.metadata.annotations ??= {});
    if (wantedAnnotation === undefined) delete annotations[CONTROLLER_MANAGED_ATTACH];
    else annotations[CONTROLLER_MANAGED_ATTACH] = wantedAnnotation;
    changed = true;
  }
  const status = (node.status ??= {});
  for (const field of ["capacity", "allocatable"] as const) {
    if (status[field] === undefined && initial.status?.[field] !== undefined) {
      status[field] = { ...initial.status[field] };
      changed = true;
    }
  }
  return changed ? node : existing;
}
