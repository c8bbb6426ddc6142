/**
 * The labels and annotations put on every container and sandbox, named like the kubelet's, so
 * `docker ps --filter label=io.kubernetes.pod.name=web-lab` works and a restarted agent can adopt.
 */
import type { ContainerConfig } from "./runtime.ts";
import type { PodSpec } from "../manifest/types.ts";

export const LABEL = {
  managedBy: "io.minikubelet.managed",
  podName: "io.kubernetes.pod.name",
  podNamespace: "io.kubernetes.pod.namespace",
  podUid: "io.kubernetes.pod.uid",
  containerName: "io.kubernetes.container.name",
  containerKind: "io.minikubelet.container.kind",
  attempt: "io.kubernetes.container.restartCount",
  configHash: "io.minikubelet.config.hash",
  sandbox: "io.minikubelet.sandbox",
  gracePeriod: "io.kubernetes.pod.terminationGracePeriod",
  /** The agent's --node: agents of other nodes on the same engine leave these alone. */
  node: "io.minikubelet.node",
  /**
   * The identity of the state database whose agent created it (store/identity.ts): an agent adopts
   * or removes only what carries its own, so two databases never take each other's containers.
   */
  database: "io.minikubelet.database",
} as const;

/** `owner` is the creating database's identity; without one (tests) the label is left off. */
export function sandboxLabels(pod: PodSpec, owner?: string): Record<string, string> {
  return {
    ...(owner ? { [LABEL.database]: owner } : {}),
    [LABEL.managedBy]: "true",
    [LABEL.podName]: pod.fullName,
    [LABEL.podNamespace]: pod.namespace,
    [LABEL.podUid]: pod.uid,
    [LABEL.configHash]: pod.configHash,
    [LABEL.sandbox]: "true",
    [LABEL.gracePeriod]: String(pod.terminationGracePeriodSeconds),
    [LABEL.node]: pod.node,
  };
}

export function containerLabels(config: ContainerConfig, owner?: string): Record<string, string> {
  return {
    ...sandboxLabels(config.pod, owner),
    [LABEL.sandbox]: "false",
    [LABEL.containerName]: config.container.name,
    [LABEL.containerKind]: config.kind,
    [LABEL.attempt]: String(config.attempt),
  };
}

/** A readable, unique name like dockershim's: k8s_<container>_<pod>_<namespace>_<uid>_<attempt>. */
/**
 * Whether a labelled container or sandbox was created by the agent of database `owner` on `node`.
 * Unset: not asked (a test without an identity). A thing without the label is never ours: an
 * agent cannot prove it created it.
 */
export function isOwnedBy(labels: Record<string, string>, owner: { database?: string; node?: string }): boolean {
  if (owner.node !== undefined && (labels[LABEL.node] ?? owner.node) !== owner.node) return false;
  return owner.database === undefined || labels[LABEL.database] === owner.database;
}

export function containerName(config: ContainerConfig): string {
  const { pod } = config;
  return `k8s_${config.container.name}_${pod.fullName}_${pod.namespace}_${pod.uid.slice(0, 8)}_${config.attempt}`;
}

export function sandboxName(pod: PodSpec): string {
  return `k8s_POD_${pod.fullName}_${pod.namespace}_${pod.uid.slice(0, 8)}_0`;
}
