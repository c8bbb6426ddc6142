/**
 * Mirror pods, as the kubelet keeps them (pkg/kubelet/pod/mirror_client.go and the mirror part of
 * its syncPod and HandlePodCleanups): each static pod the node runs has a pod `NAME-NODE` in the
 * API server, annotated `kubernetes.io/config.mirror` with the static pod's config hash and owned
 * by the Node (a controller ownerReference with the Node's uid). One is created when missing, so a
 * mirror deleted through the API comes back; one whose hash is not the static pod's (the file
 * changed) or that is being deleted is deleted and made again; one with no static pod behind it
 * (the file was removed) is deleted. Every delete carries the mirror's uid as a precondition, so a
 * newer mirror of the same name is never the one removed.
 *
 * Reconciling is level-triggered and runs beside the loop: `reconcile` is called with the wanted
 * set whenever it may have changed and returns at once; one pass runs at a time, a failed one is
 * retried with a capped doubling wait.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import type { Clock } from "../clock.ts";
import type { V1Pod } from "../v1/v1.ts";
import { MIRROR_ANNOTATION } from "../v1/pod-object.ts";
import { ApiReachability, requestOf } from "./api-reachability.ts";
import { type ClusterApi, ClusterApiError } from "./cluster-client.ts";

/** A static pod as the loop serves it, with its config hash. */
export interface StaticPod {
  object: V1Pod;
  configHash: string;
}

/** A mirror pod as the API server has it. */
export interface MirrorPodState {
  uid: string;
  hash: string | undefined;
  deleting: boolean;
}

export interface MirrorPodsOptions {
  /** Shared with the node's other writers, so an outage is told once; default one of its own. */
  reachability?: ApiReachability;
  client: Pick<ClusterApi, "request">;
  nodeName: string;
  clock: Clock;
  log: (message: string) => void;
  /** Told of each mirror pod made, with its uid (its status is then reported under it). */
  onCreated?: (key: string, uid: string) => void;
  retry?: { baseMs: number; capMs: number };
}

const DEFAULT_RETRY = { baseMs: 1000, capMs: 30_000 };

export class MirrorPods {
  /** The mirror pods the API server has, by `namespace/name`: from the watch and from this node's own writes. */
  private readonly known = new Map<string, MirrorPodState>();
  private wanted = new Map<string, StaticPod>();
  private nodeUid?: string;
  private running = false;
  private again = false;
  private failures = 0;
  private cancelRetry?: () => void;
  private stopped = false;
  private readonly reachability: ApiReachability;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: MirrorPodsOptions) {
    this.reachability = options.reachability ?? new ApiReachability({ clock: options.clock, log: options.log });
  }

  /** A mirror pod the watch showed (or showed gone). */
  observe(key: string, state: MirrorPodState | undefined, uid: string): void {
    if (state) this.known.set(key, state);
    else if (this.known.get(key)?.uid === uid) this.known.delete(key);
  }

  /** The static pods the node runs now, by `namespace/NAME-NODE`; brings the mirrors in line, never waiting. */
  reconcile(wanted: Map<string, StaticPod>): void {
    this.wanted = wanted;
    this.kick();
  }

  /** Resolves once no pass runs or is due (tests). */
  idle(): Promise<void> {
    if (!this.running && !this.cancelRetry) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    this.cancelRetry?.();
  }

  private kick(): void {
    if (this.stopped || this.cancelRetry) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass().finally(() => {
      this.running = false;
      if (this.again && !this.cancelRetry) {
        this.again = false;
        this.kick();
      } else if (!this.cancelRetry) {
        for (const resolve of this.idleWaiters.splice(0)) resolve();
      }
    });
  }

  private async pass(): Promise<void> {
    // Each mirror on its own: one the API server refuses (its namespace is gone) holds back no other.
    let failure: ClusterApiError | undefined;
    const attempt = async (write: () => Promise<void>) => {
      try {
        await write();
      } catch (error) {
        if (!(error instanceof ClusterApiError)) throw error;
        failure ??= error;
      }
    };
    for (const [key, state] of [...this.known]) {
      const pod = this.wanted.get(key);
      // Orphaned (its file is gone), outdated (the file changed) or being deleted: it goes (grace
      // 0, as DeleteMirrorPod asks), and a wanted one is made again below.
      if (!pod || state.hash !== pod.configHash || state.deleting) await attempt(() => this.remove(key, state));
    }
    for (const [key, pod] of this.wanted) {
      if (this.stopped) return;
      if (!this.known.has(key)) await attempt(() => this.create(key, pod));
    }
    if (!failure) {
      this.failures = 0;
      this.reachability.succeeded();
      return;
    }
    this.reachability.failed(requestOf(failure), failure);
    this.failures++;
    const { baseMs, capMs } = this.options.retry ?? DEFAULT_RETRY;
    this.cancelRetry = this.options.clock.setTimeout(() => {
      this.cancelRetry = undefined;
      this.kick();
    }, cappedDoubling(baseMs, capMs, this.failures - 1));
  }

  private async remove(key: string, state: MirrorPodState): Promise<void> {
    const [namespace, name] = key.split("/") as [string, string];
    try {
      await this.options.client.request({
        method: "DELETE",
        path: `/api/v1/namespaces/${namespace}/pods/${name}`,
        body: { apiVersion: "v1", kind: "DeleteOptions", gracePeriodSeconds: 0, preconditions: { uid: state.uid } },
      });
    } catch (error) {
      // Already gone, or the name holds a newer pod: either way this one is no more.
      if (!(error instanceof ClusterApiError) || !(error.notFound || error.code === 409)) throw error;
    }
    if (this.known.get(key)?.uid === state.uid) this.known.delete(key);
  }

  private async create(key: string, pod: StaticPod): Promise<void> {
    const [namespace] = key.split("/") as [string];
    const nodeUid = await this.node();
    const body = mirrorPodOf(pod, this.options.nodeName, nodeUid);
    try {
      const made = await this.options.client.request<{ metadata: { uid: string } }>({ method: "POST", path: `/api/v1/namespaces/${namespace}/pods`, body });
      this.known.set(key, { uid: made.metadata.uid, hash: pod.configHash, deleting: false });
      this.options.onCreated?.(key, made.metadata.uid);
    } catch (error) {
      // Made meanwhile (the watch has not shown it yet): the watch tells its uid and hash.
      if (!(error instanceof ClusterApiError) || !error.alreadyExists) throw error;
    }
  }

  /** The Node's uid, the mirror pods' owner; read once (the kubelet's nodeGetter). */
  private async node(): Promise<string> {
    if (this.nodeUid) return this.nodeUid;
    const node = await this.options.client.request<{ metadata: { uid: string } }>({ method: "GET", path: `/api/v1/nodes/${this.options.nodeName}` });
    this.nodeUid = node.metadata.uid;
    return this.nodeUid;
  }
}

/** The mirror pod of a static pod: its metadata and spec as the node serves them, the mirror annotation and the Node as owner. */
export function mirrorPodOf(pod: StaticPod, nodeName: string, nodeUid: string): V1Pod {
  const { metadata, spec } = pod.object;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      labels: metadata.labels ?? {},
      annotations: { ...metadata.annotations, "kubernetes.io/config.hash": pod.configHash, [MIRROR_ANNOTATION]: pod.configHash },
      ownerReferences: [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid, controller: true }],
    } as V1Pod["metadata"],
    spec: { ...spec, nodeName },
  } as V1Pod;
}
