/**
 * `run`'s two pod sources in one desired set: the manifest files (static pods) and the pods created
 * through the API, kept in the database. The API writes through `writes`; each committed write
 * wakes the sources (a rescan of the files, which offers the union), never a poll.
 */
import type { Database } from "bun:sqlite";
import type { PodWrites } from "./pod-writes.ts";
import { ApiPodSource } from "./api-pod-source.ts";
import { admitApiPod } from "../manifest/api-pod.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import { SqliteApiPodStore } from "../store/api-pod-store.ts";
import { SqliteNamespaceStore } from "../store/namespace-store.ts";
import { SqliteObjectStore } from "../store/object-store.ts";
import type { SqliteStore } from "../store/pod-store.ts";

export interface PodSourcesOptions {
  /** The agent's write connection and its store (whose revision counter the API's writes share). */
  db: Database;
  store: Pick<SqliteStore, "revisions">;
  node: string;
  /** The runtime's rules, which an API pod meets as a file does. */
  rules: ManifestRules;
  log: (message: string) => void;
}

/** A source of pods beside the files and the API: node mode's cluster pods. */
export interface ClusterSource {
  readonly ready: boolean;
  pods(): Map<PodKey, PodSpec>;
}

/** What the sources need of the loop they feed: which pod runs under each key, and word of each pass (removed: gone). */
export interface SourcesLoop {
  readonly pods: ReadonlyMap<PodKey, { spec: { uid: string } }>;
  onPodSynced(listener: (pod: { spec: PodSpec }, object: unknown, removed: boolean) => void): () => void;
}

export class PodSources {
  readonly api: ApiPodSource;
  readonly writes: PodWrites;
  private files = new Map<PodKey, PodSpec>();
  private kubelet?: SourcesLoop;
  /** Node mode's third source, the cluster's pods bound to this node (cluster-pod-source.ts). */
  private cluster?: ClusterSource;

  constructor(options: PodSourcesOptions) {
    const namespaces = new SqliteNamespaceStore(options.db, options.store.revisions);
    const store = new SqliteApiPodStore(options.db, options.store.revisions, namespaces);
    this.api = new ApiPodSource({ store, node: options.node, rules: options.rules, log: options.log });
    // Read before the first scan: adoption must see the API's pods too.
    this.api.read();
    this.writes = {
      store,
      namespaces,
      objects: new SqliteObjectStore(options.db, options.store.revisions),
      admit: (object, identity, strict, stage = "stored") => {
        const name = (object.metadata as { name?: unknown } | undefined)?.name;
        const meta = { createdAt: identity.createdAt };
        return admitApiPod(object, { uid: identity.uid, node: options.node, label: `pod ${JSON.stringify(name ?? "")}`, meta, stage, apiObjects: "allowed" }, { ...options.rules, strict });
      },
      fileOf: (namespace, name) => this.files.get(`${namespace}/${name}`)?.source,
      changed: () => {
        // The write is committed and is answered as such: waking the loop must not turn it into an error.
        try {
          this.api.changed();
        } catch (error) {
          options.log(`waking the loop after an API write failed: ${(error as Error).message}; the next rescan picks it up`);
        }
      },
    };
  }

  /** The files' newest pods: returns the desired set, every source (a file never holds a key the API has). */
  desired(files: Map<PodKey, PodSpec>): Map<PodKey, PodSpec> {
    this.files = files;
    // Read again on every scan, the periodic one included: a write whose wake-up failed is not lost.
    this.api.read();
    return new Map([...files, ...this.api.pods(), ...(this.cluster?.pods() ?? [])]);
  }

  /** Adds node mode's cluster source: its pods join the desired set, and until it has listed once the loop stops nothing. */
  addCluster(source: ClusterSource): void {
    this.cluster = source;
  }

  /** Whether every source has been read once (the kubelet's sourcesReady): only then may a pod no source wants be stopped. */
  ready(): boolean {
    return this.cluster?.ready ?? true;
  }

  /**
   * Connects the sources to the loop: an API write rescans the files (a name the API freed may let
   * a refused file's pod run, and the scan offers the union), and a deleted API pod's row goes once
   * the loop no longer runs it. Call `removeFinished` after each sync as well (a restart may find a
   * deleted pod already gone).
   */
  attach(kubelet: SourcesLoop, rescan: () => void): void {
    this.kubelet = kubelet;
    this.api.onChange(rescan);
    kubelet.onPodSynced((pod, removed) => {
      if (removed && pod.spec.api) this.removeFinished();
    });
  }

  /** Removes the rows of deleted API pods the loop has finished stopping (deferred: never inside a pass). */
  removeFinished(): void {
    const kubelet = this.kubelet;
    if (!kubelet) return;
    queueMicrotask(() => this.api.removeFinished((key, uid) => kubelet.pods.get(key)?.spec.uid === uid));
  }
}
