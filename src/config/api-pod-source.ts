/**
 * The second pod source, beside the manifest directory: the pods created through the API, read from
 * the database (like the kubelet's apiserver source beside its file source). `run` hands `sync` the
 * union of both. The API tells the source after each committed write (`changed`), which is what
 * wakes the loop: nothing polls. A deleted pod's row is removed once its pod is gone, as a removed
 * manifest file is gone; until then its spec carries the deletion, which the loop acts on.
 */
import { admitApiPod } from "../manifest/api-pod.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import type { Issue } from "../manifest/errors.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import type { ApiPodStore, StoredApiPod } from "../store/api-pod-store.ts";

export interface ApiPodSourceOptions {
  store: Pick<ApiPodStore, "list" | "remove">;
  /** The agent's --node ("" for none). */
  node: string;
  /** The runtime's rules, as for files. */
  rules?: ManifestRules;
  log: (message: string) => void;
}

export class ApiPodSource {
  private current = new Map<PodKey, PodSpec>();
  private readonly listeners = new Set<() => void>();
  /** Problems already logged, by uid: a pod that no longer admits is said once, not on every read. */
  private reported = new Map<string, string>();
  private warningListener?: (pod: PodSpec, warnings: Issue[]) => void;
  /** The pods (uid and config hash) whose warnings were told: each version of a pod is told once. */
  private warned = new Set<string>();
  /**
   * Each stored version's admission, by uid: the periodic rescan reads every row, and a row not
   * written since (the same revision and deletion) is not validated again.
   */
  private admitted = new Map<string, { version: string; spec: PodSpec; warnings: Issue[] }>();

  constructor(private readonly options: ApiPodSourceOptions) {}

  /** Called after each change of the API pods (once read again). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Told, at a read, the fields of each new pod or pod version that the agent does not honour; the first read after this tells those already read. */
  onWarnings(listener: (pod: PodSpec, warnings: Issue[]) => void): void {
    this.warningListener = listener;
  }

  /** Reads the stored pods again and tells the listeners: the API calls it after each committed write. */
  changed(): void {
    this.read();
    for (const listener of this.listeners) listener();
  }

  /**
   * Reads the stored pods. A pod the rules now refuse (the agent restarted on another runtime) is
   * logged and left out; a failed read keeps the previous set (the next write or read retries).
   */
  read(): void {
    let stored: StoredApiPod[];
    try {
      stored = this.options.store.list();
    } catch (error) {
      this.options.log(`reading the API's pods failed: ${(error as Error).message}; keeping the last read`);
      return;
    }
    const pods = new Map<PodKey, PodSpec>();
    const reported = new Map<string, string>();
    const admitted = new Map<string, { version: string; spec: PodSpec; warnings: Issue[] }>();
    for (const pod of stored) {
      try {
        const version = `${pod.resourceVersion}/${pod.deletion ? `${pod.deletion.requestedAt}/${pod.deletion.gracePeriodSeconds}` : ""}`;
        let known = this.admitted.get(pod.uid);
        if (known?.version !== version) {
          const { pod: spec, warnings } = admitApiPod(pod.object, { uid: pod.uid, node: this.options.node, label: `pod ${pod.namespace}/${pod.name}`, meta: { createdAt: pod.createdAt, ...(pod.deletion && { deletion: pod.deletion }) }, stage: "stored", apiObjects: "allowed" }, this.options.rules);
          known = { version, spec, warnings };
        }
        admitted.set(pod.uid, known);
        const { spec, warnings } = known;
        pods.set(spec.key, spec);
        this.tellWarnings(spec, warnings);
      } catch (error) {
        const message = (error as Error).message;
        reported.set(pod.uid, message);
        if (this.reported.get(pod.uid) !== message) this.options.log(`API pod ${pod.namespace}/${pod.name} is not run: ${message}`);
      }
    }
    this.reported = reported;
    this.current = pods;
    this.admitted = admitted;
    // Only the versions still stored are remembered: the set never outgrows the pods.
    const current = new Set([...pods.values()].map(warningVersion));
    for (const version of this.warned) if (!current.has(version)) this.warned.delete(version);
  }

  private tellWarnings(spec: PodSpec, warnings: Issue[]): void {
    const version = warningVersion(spec);
    if (!this.warningListener || this.warned.has(version)) return;
    this.warned.add(version);
    // Unknown fields were the write's own Warning headers, and were dropped when it was stored.
    const unhonoured = warnings.filter((issue) => !issue.unknownField);
    if (unhonoured.length > 0) this.warningListener(spec, unhonoured);
  }

  /** The API's pods as last read, Terminating ones included. */
  pods(): Map<PodKey, PodSpec> {
    return this.current;
  }

  /** The keys the API's pods hold, each naming its owner for a file that wants the same key. */
  taken(): Map<PodKey, string> {
    return new Map([...this.current.values()].map((spec) => [spec.key, `the API (uid ${spec.uid})`]));
  }

  /**
   * Removes the rows of deleted pods that are no longer running (`running` says whether the loop
   * still has that incarnation): after the loop removed the pod, or after a restart found it gone.
   * Returns whether any row went (the sources then changed).
   */
  removeFinished(running: (key: PodKey, uid: string) => boolean): boolean {
    let removed = false;
    for (const spec of this.current.values()) {
      if (!spec.api?.deletion || running(spec.key, spec.uid)) continue;
      try {
        removed = this.options.store.remove(spec.namespace, spec.name, spec.uid) || removed;
      } catch (error) {
        // The row stays: the next removal or read tries again, and the pod is not started meanwhile.
        this.options.log(`removing the deleted pod ${spec.key} from the database failed: ${(error as Error).message}`);
      }
    }
    if (removed) this.changed();
    return removed;
  }
}

function warningVersion(spec: PodSpec): string {
  return `${spec.uid}/${spec.configHash}`;
}
