/**
 * Node mode's pods, one part of startNodeMode: the cluster's pods bound to this node feed the loop
 * (config/cluster-pod-source.ts), and what the loop makes of them goes back to the API server
 * beside it, never in its way: each pass's status (node/pod-status-reporter.ts), the final delete
 * of a pod that was being deleted once it has stopped, a refusal for a pod this node cannot run
 * (the kubelet's rejectPod), the events of the node's pods (node/cluster-events.ts), and the mirror
 * pod of each static pod (node/mirror-pods.ts).
 */
import type { Clock } from "../clock.ts";
import { ClusterPodSource, type ClusterPodObject } from "../config/cluster-pod-source.ts";
import { MIRROR_ANNOTATION } from "../v1/pod-object.ts";
import type { Kubelet } from "../kubelet/kubelet.ts";
import { specRefusal } from "../kubelet/admission/pod-admission.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import type { ApiReachability } from "../node/api-reachability.ts";
import type { ClusterEvents } from "../node/cluster-events.ts";
import type { ClusterApi } from "../node/cluster-client.ts";
import { MirrorPods, type StaticPod } from "../node/mirror-pods.ts";
import { PodStatusReporter, type ClusterPodRef } from "../node/pod-status-reporter.ts";
import type { V1PodStatus } from "../v1/v1.ts";

export interface NodePodsOptions {
  client: Pick<ClusterApi, "request" | "watch">;
  nodeName: string;
  kubelet: Pick<Kubelet, "pods" | "onPodSynced" | "recorder">;
  /** The runtime's rules, which a cluster pod meets as a file does. */
  rules: ManifestRules;
  /** Offers the desired set again (the sources' rescan), after the cluster's pods changed. */
  rescan: () => void;
  /** Whether adoption is done and the loop runs the desired set: only then is a pod it does not run one it never will. */
  loopOpen: () => boolean;
  clock: Clock;
  log: (message: string) => void;
  /** The node's one report of the API server's reachability, shared with the Node's lifecycle. */
  reachability: ApiReachability;
  /** The node's events toward the API server, shared with the Node's lifecycle (stopped by its owner). */
  events: ClusterEvents;
}

/** The kubelet's reason for a pod it cannot run here (our runtime's rules; no such admit handler upstream). */
export const UNSUPPORTED_REASON = "UnsupportedPodSpec";

/** How soon pods deleted while the agent was down are looked at again while adoption is not done. */
const ADOPTION_RECHECK_MS = 500;

export interface NodePods {
  readonly source: ClusterPodSource;
  readonly reporter: PodStatusReporter;
  stop(): Promise<void>;
}

export function startNodePods(options: NodePodsOptions): NodePods {
  const { client, nodeName, kubelet, clock, log } = options;
  // One voice for the node: an outage is one line, whichever writer meets it first.
  const { reachability } = options;
  const reporter = new PodStatusReporter({ client, clock, log, reachability });
  const { events } = options;
  const statics = new Map<PodKey, StaticPod>();
  const mirrorUids = new Map<string, string>();
  const mirrors = new MirrorPods({
    client,
    nodeName,
    clock,
    log,
    reachability,
    onCreated: (key, uid) => {
      mirrorUids.set(key, uid);
      reportMirror(key);
    },
  });
  /** The uids of the cluster's pods the loop was given (a pod's last pass may come after the watch saw it go). */
  const clusterUids = new Set<string>();
  const objects = new Map<string, ClusterPodObject>();
  const rejected = new Set<string>();

  const reportMirror = (key: PodKey) => {
    const pod = statics.get(key);
    const uid = mirrorUids.get(key);
    if (!pod || !uid || !pod.object.status) return;
    const [namespace, name] = key.split("/") as [string, string];
    reporter.report({ namespace, name, uid }, pod.object.status);
  };

  const refOf = (spec: PodSpec): ClusterPodRef => ({ namespace: spec.namespace, name: spec.name, uid: spec.uid, readinessGates: readinessGates(spec.manifest.spec) });

  /** Pods being deleted that the loop does not run (never started, or stopped before a restart): their deletion is finished at once. */
  let recheck: (() => void) | undefined;
  const finishUnrun = () => {
    if (!options.loopOpen()) {
      // Adoption is still matching checkpoints: look again shortly (no source change may come).
      recheck ??= clock.setTimeout(() => {
        recheck = undefined;
        finishUnrun();
      }, ADOPTION_RECHECK_MS);
      return;
    }
    for (const spec of source.pods().values()) {
      if (!spec.api?.deletion || kubelet.pods.get(spec.key)?.spec.uid === spec.uid) continue;
      // Gone from the API server already: nothing to report or delete.
      if (source.isTombstone(spec.uid)) {
        queueMicrotask(() => source.forgetTombstone(spec.uid));
        continue;
      }
      if (!reporter.settled(spec.uid)) continue;
      // Stopped without running: terminal, as the kubelet reports a terminated pod whose phase was not (Failed).
      const status = (objects.get(spec.uid)?.status ?? {}) as V1PodStatus;
      const terminal = status.phase === "Succeeded" || status.phase === "Failed";
      reporter.report(refOf(spec), terminal ? status : { ...status, phase: "Failed" }, { finish: true });
    }
  };

  /** A pod this node cannot run fails, as the kubelet's rejectPod fails it: a Warning and a Failed status. */
  const rejectRefused = () => {
    for (const [uid, { object, message: refusal, withoutRuntimeRules }] of source.refused()) {
      const ref = { namespace: object.metadata.namespace, name: object.metadata.name, uid };
      const deleting = object.metadata.deletionTimestamp !== undefined;
      if (rejected.has(uid) && !deleting) continue;
      if (deleting && !reporter.settled(uid)) continue;
      const first = !rejected.has(uid);
      rejected.add(uid);
      // The QoS class stays as the API server set it on create ("keep it as is", rejectPod says).
      const qosClass = object.status?.qosClass;
      // The kubelet's own admission answers first: it refuses what it refuses whatever the runtime.
      const kubelet = withoutRuntimeRules && specRefusal(withoutRuntimeRules);
      const reason = kubelet ? kubelet.reason : UNSUPPORTED_REASON;
      const message = kubelet ? kubelet.message : refusal;
      const status = { phase: "Failed", reason, message: `Pod was rejected: ${message}`, ...(qosClass !== undefined && { qosClass }) } as V1PodStatus;
      reporter.report(ref, status, { finish: deleting });
      if (first) events.record({ at: clock.now(), type: "Warning", reason, podKey: `${ref.namespace}/${ref.name}`, namespace: ref.namespace, pod: ref.name, podUid: uid, container: "", message }, ref);
    }
  };

  const reconcileMirrors = () => mirrors.reconcile(new Map(statics));

  const source = new ClusterPodSource({
    client,
    nodeName,
    rules: options.rules,
    clock,
    log,
    reachability,
    onChange: () => {
      for (const spec of source.pods().values()) clusterUids.add(spec.uid);
      options.rescan();
      rejectRefused();
      finishUnrun();
      reconcileMirrors();
    },
  });
  source.onObject((object, deleted) => {
    const { metadata } = object;
    const key = `${metadata.namespace}/${metadata.name}`;
    const ref = { namespace: metadata.namespace, name: metadata.name, uid: metadata.uid, readinessGates: readinessGates(object.spec) };
    if (metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) {
      mirrors.observe(key, deleted ? undefined : { uid: metadata.uid, hash: metadata.annotations[MIRROR_ANNOTATION], deleting: metadata.deletionTimestamp !== undefined }, metadata.uid);
      if (!deleted) mirrorUids.set(key, metadata.uid);
      else if (mirrorUids.get(key) === metadata.uid) mirrorUids.delete(key);
    }
    if (deleted) {
      objects.delete(metadata.uid);
      reporter.forget(metadata.uid);
      rejected.delete(metadata.uid);
      return;
    }
    objects.set(metadata.uid, object);
    reporter.observe(ref, object.status as V1PodStatus | undefined, metadata.resourceVersion);
  });

  const stopSynced = kubelet.onPodSynced((pod, object, removed) => {
    const spec = pod.spec;
    if (!spec.api) {
      // A static pod: its mirror follows it, and carries its status.
      if (removed && !pod.replacement) statics.delete(spec.key);
      else statics.set(spec.key, { object, configHash: spec.configHash });
      const mirror = mirrorUids.get(spec.key);
      if (!removed && mirror) reporter.report({ namespace: spec.namespace, name: spec.fullName, uid: mirror }, object.status ?? {});
      reconcileMirrors();
      return;
    }
    if (!clusterUids.has(spec.uid)) return;
    if (source.isTombstone(spec.uid)) {
      if (removed) queueMicrotask(() => source.forgetTombstone(spec.uid));
      return;
    }
    const wanted = source.pods().get(spec.key);
    const finish = removed && wanted?.uid === spec.uid && wanted.api?.deletion !== undefined;
    reporter.report(refOf(spec), withObservedGeneration(object.status ?? {}, objects.get(spec.uid)?.metadata.generation), { finish });
    if (removed && !pod.replacement) clusterUids.delete(spec.uid);
  });
  const stopEvents = kubelet.recorder.subscribe((event) => {
    if (event.podUid === "") return;
    events.record(event, { namespace: event.namespace, name: event.pod, uid: event.podUid });
  });

  source.start();
  return {
    source,
    reporter,
    async stop() {
      recheck?.();
      stopSynced();
      stopEvents();
      await source.stop();
      reporter.stop();
      mirrors.stop();
    },
  };
}

/**
 * The pod's metadata.generation the status answers to (KEP-5067, GA in 1.35): on the status and on
 * each condition the kubelet sets, as generateAPIPodStatus stamps them.
 */
export function withObservedGeneration(status: V1PodStatus, generation: unknown): V1PodStatus {
  if (typeof generation !== "number") return status;
  const conditions = status.conditions?.map((condition) => ({ ...condition, observedGeneration: generation }));
  return { ...status, observedGeneration: generation, ...(conditions && { conditions }) } as V1PodStatus;
}

/** The condition types a pod spec's readinessGates name. */
function readinessGates(spec: unknown): string[] {
  const gates = (spec as { readinessGates?: unknown } | undefined)?.readinessGates;
  if (!Array.isArray(gates)) return [];
  return gates.map((gate) => (gate as { conditionType?: unknown })?.conditionType).filter((type): type is string => typeof type === "string");
}
