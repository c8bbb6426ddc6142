/**
 * Node mode's pod source, the kubelet's apiserver source (pkg/kubelet/config/apiserver.go): the
 * pods of every namespace bound to this node (`fieldSelector=spec.nodeName=NAME`), listed, then
 * watched from the list's resourceVersion with bookmarks; a watch that ends is resumed from the
 * newest resourceVersion seen, one the API server no longer has (410 Expired) is listed again, and
 * a failure waits a capped doubling before the next try. It runs beside the loop and never makes
 * it wait: each change only tells `onChange`, which offers the new desired set.
 *
 * Each pod is admitted as an API pod is (manifest/api-pod.ts: its uid and name from the cluster, no
 * `-NODE` suffix, `kubernetes.io/config.source: api`). A pod that cannot be admitted here (the
 * process runtime and no `command`, a volume this agent does not mount) is kept aside as refused,
 * with the message the node reports in its status, as the kubelet's rejectPod does. Mirror pods
 * (annotation `kubernetes.io/config.mirror`) are the node's own reflections of its static pods:
 * never run, kept aside for the mirror pod manager.
 */
import { cappedDoubling } from "../capped-doubling.ts";
import { sleep, type Clock } from "../clock.ts";
import { admitApiPod } from "../manifest/api-pod.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import { formatIssue, ManifestError } from "../manifest/errors.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import { ApiReachability, requestOf } from "../node/api-reachability.ts";
import { type ClusterApi, ClusterApiError } from "../node/cluster-client.ts";
import { MIRROR_ANNOTATION } from "../v1/pod-object.ts";

/** A pod as the API server serves it (the fields this source reads). */
export interface ClusterPodObject {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    generateName?: string;
    [field: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

export interface RefusedClusterPod {
  object: ClusterPodObject;
  message: string;
  /**
   * The pod as it reads when only the runtime's rules refuse it: the kubelet's own admission
   * (which knows nothing of those rules) is asked about it first.
   */
  withoutRuntimeRules?: PodSpec;
}

export interface ClusterPodSourceOptions {
  /** Shared with the node's other writers, so an outage is told once; default one of its own. */
  reachability?: ApiReachability;
  client: Pick<ClusterApi, "request" | "watch">;
  nodeName: string;
  /** The runtime's rules, which a cluster pod meets as a file does. */
  rules: ManifestRules;
  clock: Clock;
  log: (message: string) => void;
  /** Told after each change (coalesced within a turn); the set is then read through `pods()`. */
  onChange: () => void;
  /** Wait after a failed list or watch: first wait, doubling up to the cap. Default 1 s to 30 s. */
  retry?: { baseMs: number; capMs: number };
}

const DEFAULT_RETRY = { baseMs: 1000, capMs: 30_000 };
/** Changes this close behind the last one told are told together (the manifest watcher gathers a burst of files the same 100 ms). */
const GATHER_MS = 100;
/** client-go's reflector asks for a watch of 5 to 10 minutes, so watches end spread out. */
const MIN_WATCH_SECONDS = 300;

export class ClusterPodSource {
  private readonly objects = new Map<string, ClusterPodObject>();
  /** The last object seen of each pod, for the deletion a DELETED event may lack. */
  private readonly lastSeen = new Map<string, ClusterPodObject>();
  /** Pods the API server no longer has that were being deleted, until the loop no longer runs them (`forgetTombstone`). */
  private readonly tombstones = new Map<string, ClusterPodObject>();
  private admitted = new Map<PodKey, PodSpec>();
  private refusedPods = new Map<string, RefusedClusterPod>();
  private mirrorPods = new Map<PodKey, ClusterPodObject>();
  /** Refusals already logged, by uid: said once, not on every change; only the pods still here are kept. */
  private reported = new Map<string, string>();
  /**
   * Each pod's admission, by uid, kept while its object is the one admitted: a watch event (most are
   * the node's own status coming back) admits only the pod it brought, not every pod bound here.
   */
  private admissions = new Map<string, Admission>();
  private listed = false;
  private resourceVersion?: string;
  private readonly abort = new AbortController();
  private running?: Promise<void>;
  private changeQueued = false;
  /** When the last change was told (`onChange`), and the cancel of a told-later one. */
  private deliveredAt = -Infinity;
  private cancelDelivery?: () => void;
  private readonly reachability: ApiReachability;
  private readonly objectListeners = new Set<(object: ClusterPodObject, deleted: boolean) => void>();

  constructor(private readonly options: ClusterPodSourceOptions) {
    this.reachability = options.reachability ?? new ApiReachability({ clock: options.clock, log: options.log });
  }

  /** True once the first list answered: until then the loop stops no pod for being unwanted. */
  get ready(): boolean {
    return this.listed;
  }

  /** The cluster's pods this node runs (Terminating ones included), by key. */
  pods(): Map<PodKey, PodSpec> {
    return this.admitted;
  }

  /** The pods bound here that this node cannot run, by uid. */
  refused(): Map<string, RefusedClusterPod> {
    return this.refusedPods;
  }

  /** The mirror pods bound here, by `namespace/name`. */
  mirrors(): Map<PodKey, ClusterPodObject> {
    return this.mirrorPods;
  }

  /** Whether `uid` is only a tombstone: the API server no longer has it. */
  isTombstone(uid: string): boolean {
    return this.tombstones.has(uid);
  }

  /** Drops a tombstone once the loop no longer runs its pod; the set changes (a rescan follows). */
  forgetTombstone(uid: string): void {
    if (this.tombstones.delete(uid)) this.admitAll();
  }

  /** Each object as it arrives (listed, added, modified) or goes (`deleted`). */
  onObject(listener: (object: ClusterPodObject, deleted: boolean) => void): () => void {
    this.objectListeners.add(listener);
    return () => this.objectListeners.delete(listener);
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.cancelDelivery?.();
    await this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    const { signal } = this.abort;
    const path = "/api/v1/pods";
    const fieldSelector = `spec.nodeName=${this.options.nodeName}`;
    while (!signal.aborted) {
      try {
        if (this.resourceVersion === undefined) {
          const list = await this.options.client.request<{ metadata?: { resourceVersion?: string }; items?: ClusterPodObject[] }>({ method: "GET", path, query: { fieldSelector }, signal });
          this.replaceAll(list.items ?? []);
          this.resourceVersion = list.metadata?.resourceVersion ?? "0";
          this.listed = true;
          this.reachability.succeeded();
          failures = 0;
        }
        const timeoutSeconds = MIN_WATCH_SECONDS + Math.floor(Math.random() * MIN_WATCH_SECONDS);
        const events = this.options.client.watch<ClusterPodObject>(path, { fieldSelector, resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds }, signal);
        for await (const event of events) {
          failures = 0;
          this.reachability.succeeded();
          const version = event.object.metadata?.resourceVersion;
          if (version) this.resourceVersion = version;
          if (event.type === "BOOKMARK") continue;
          if (event.type === "DELETED") this.remove(event.object);
          else this.put(event.object);
          this.admitAll();
        }
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ClusterApiError && error.expired) {
          // The API server no longer has that resourceVersion: list again, at once.
          this.resourceVersion = undefined;
          continue;
        }
        failures++;
        if (error instanceof ClusterApiError) this.reachability.failed(requestOf(error), error);
        else this.options.log(`watching the node's pods failed: ${(error as Error).message}; retrying`);
        try {
          await sleep(this.options.clock, cappedDoubling((this.options.retry ?? DEFAULT_RETRY).baseMs, (this.options.retry ?? DEFAULT_RETRY).capMs, failures - 1), signal);
        } catch {
          return;
        }
      }
    }
  }

  private replaceAll(items: ClusterPodObject[]): void {
    const seen = new Set(items.map((item) => item.metadata.uid));
    for (const [uid, object] of this.objects) if (!seen.has(uid)) this.remove(object);
    for (const item of items) this.put(item);
    this.admitAll();
  }

  private put(object: ClusterPodObject): void {
    this.objects.set(object.metadata.uid, object);
    this.lastSeen.set(object.metadata.uid, object);
    for (const listener of this.objectListeners) listener(object, false);
  }

  private remove(object: ClusterPodObject): void {
    this.objects.delete(object.metadata.uid);
    // Gone while being deleted (`--force --grace-period=0`, or this node's own final delete): kept
    // as a tombstone, so the loop stops it with the deletion's grace rather than the pod's own.
    const known = this.lastSeen.get(object.metadata.uid);
    if (known?.metadata.deletionTimestamp !== undefined || object.metadata.deletionTimestamp !== undefined) {
      this.tombstones.set(object.metadata.uid, object.metadata.deletionTimestamp !== undefined ? object : known!);
    }
    this.lastSeen.delete(object.metadata.uid);
    for (const listener of this.objectListeners) listener(object, true);
  }

  /**
   * The desired set from every pod bound here, and says so. A pod whose object changed only outside
   * what admission reads (its status: each patch this node makes comes back as an event) keeps its
   * admission: at a hundred pods, admitting all of them on each of the hundreds of events their
   * start brings was seconds of the agent's thread, and admitting each again per status patch a
   * third of a second.
   */
  private admitAll(): void {
    const admitted = new Map<PodKey, PodSpec>();
    const refused = new Map<string, RefusedClusterPod>();
    const mirrors = new Map<PodKey, ClusterPodObject>();
    const reported = new Map<string, string>();
    const admissions = new Map<string, Admission>();
    for (const object of this.objects.values()) {
      const { metadata } = object;
      const key = `${metadata.namespace}/${metadata.name}`;
      if (metadata.annotations?.[MIRROR_ANNOTATION] !== undefined) {
        mirrors.set(key, object);
        continue;
      }
      let admission = this.admissions.get(metadata.uid);
      if (admission?.object !== object) {
        const admitted = admittedPart(object);
        if (admission?.admitted === admitted) {
          admission = { ...admission, object };
        } else {
          try {
            admission = { object, admitted, spec: admitClusterPod(object, this.options.nodeName, this.options.rules) };
          } catch (error) {
            // The pod is named by whoever shows the message (its status, the log line): the issues alone.
            const message = error instanceof ManifestError ? error.issues.map(formatIssue).join("; ") : (error as Error).message;
            const withoutRuntimeRules = this.options.rules.runtime === undefined ? undefined : admittedWithout(object, this.options.nodeName, this.options.rules);
            admission = { object, admitted, message, ...(withoutRuntimeRules && { withoutRuntimeRules }) };
          }
        }
      }
      admissions.set(metadata.uid, admission);
      if (admission.spec) {
        admitted.set(admission.spec.key, admission.spec);
        continue;
      }
      const message = admission.message!;
      refused.set(metadata.uid, { object, message, ...(admission.withoutRuntimeRules && { withoutRuntimeRules: admission.withoutRuntimeRules }) });
      if (this.reported.get(metadata.uid) !== message) this.options.log(`pod ${key} is not run: ${message}`);
      reported.set(metadata.uid, message);
    }
    this.admissions = admissions;
    for (const [uid, object] of this.tombstones) {
      const key = `${object.metadata.namespace}/${object.metadata.name}`;
      // A new pod of the same name wins; the tombstone only stops the old one.
      if (admitted.has(key)) continue;
      try {
        admitted.set(key, admitClusterPod(object, this.options.nodeName, this.options.rules));
      } catch {
        this.tombstones.delete(uid);
      }
    }
    this.admitted = admitted;
    this.refusedPods = refused;
    this.reported = reported;
    this.mirrorPods = mirrors;
    if (this.changeQueued) return;
    this.changeQueued = true;
    const deliver = () => {
      this.changeQueued = false;
      this.deliveredAt = this.options.clock.now();
      if (!this.abort.signal.aborted) this.options.onChange();
    };
    // A change on its own goes at once; one close behind the last waits out the gathering, so a
    // burst (a hundred pods bound at once, one watch event each) is a few desired sets, not one per
    // pod, each of which syncs every pod.
    const wait = this.deliveredAt + GATHER_MS - this.options.clock.now();
    if (wait <= 0) queueMicrotask(deliver);
    else this.cancelDelivery = this.options.clock.setTimeout(deliver, wait);
  }
}

/** A pod's admission, kept while the part of its object that admission reads stays the same. */
interface Admission {
  object: ClusterPodObject;
  /** `admittedPart` of the object admitted. */
  admitted: string;
  spec?: PodSpec;
  message?: string;
  withoutRuntimeRules?: PodSpec;
}

/** What `admitClusterPod` reads of an object (everything but its status and bookkeeping), as one comparable string. */
function admittedPart(object: ClusterPodObject): string {
  const { name, namespace, generateName, labels, annotations, uid, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds } = object.metadata;
  return JSON.stringify([name, namespace, generateName, labels, annotations, uid, creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds, object.spec]);
}

/** The pod admitted without the runtime's rules, or undefined when it is refused even so. */
function admittedWithout(object: ClusterPodObject, nodeName: string, rules: ManifestRules): PodSpec | undefined {
  try {
    return admitClusterPod(object, nodeName, { ...rules, runtime: undefined });
  } catch {
    return undefined;
  }
}

/**
 * A cluster pod as the loop's desired pod: the object's metadata the pod reads (name, namespace,
 * labels, annotations) and its spec, with its uid, creation and deletion from the API server. The
 * deletion's start is its deletionTimestamp less its grace (the API server sets the timestamp to
 * when the grace ends).
 * @throws ManifestError when this node cannot run it.
 */
export function admitClusterPod(object: ClusterPodObject, nodeName: string, rules: ManifestRules): PodSpec {
  const { metadata } = object;
  const written = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: metadata.name,
      namespace: metadata.namespace,
      ...(metadata.generateName && { generateName: metadata.generateName }),
      ...(metadata.labels && { labels: metadata.labels }),
      ...(metadata.annotations && { annotations: metadata.annotations }),
    },
    spec: object.spec ?? {},
  };
  const createdAt = Date.parse(metadata.creationTimestamp ?? "") || 0;
  let deletion: { requestedAt: number; gracePeriodSeconds: number } | undefined;
  if (metadata.deletionTimestamp) {
    const gracePeriodSeconds = metadata.deletionGracePeriodSeconds ?? 0;
    deletion = { requestedAt: Date.parse(metadata.deletionTimestamp) - gracePeriodSeconds * 1000, gracePeriodSeconds };
  }
  const { pod } = admitApiPod(written, { uid: metadata.uid, node: nodeName, label: `pod ${metadata.namespace}/${metadata.name}`, meta: { createdAt, ...(deletion && { deletion }) }, stage: "stored", apiObjects: "allowed" }, rules);
  return pod;
}
