/**
 * The difference between the desired set and the pods the loop runs, the kubelet's HandlePodAdditions,
 * Updates and Removes in one level-triggered walk: a new pod is admitted, a changed one updated in
 * place or replaced, one deleted through the API stopped with its grace, one no source wants any
 * more stopped. The loop then syncs the pods this touched first, or (as the kubelet's handlers do)
 * only those: every change the walk makes to a pod is in the set it returns.
 */
import type { PodKey, PodSpec } from "../manifest/types.ts";
import type { PodRequests } from "./admission/admission.ts";
import { applyInPlaceUpdate, inPlaceChanges } from "./container-changes.ts";
import { currentAllocation, type Allocation } from "./pod-resize.ts";
import type { PodRecord } from "./pod-state.ts";

/** What the walk changes in the loop. */
export interface DesiredLoop {
  readonly pods: Map<PodKey, PodRecord>;
  /** A new pod's record, admitted against what the pods admitted before it requested. */
  admit(spec: PodSpec, admitted: PodRequests[]): PodRecord;
  /** The requests of the pods admitted now, read once per walk. */
  admittedNow(): PodRequests[];
  requestDeletion(pod: PodRecord, cause: "removed" | "replaced"): void;
  /** The pod's spec may ask for other resources than `before` allocated: the resize is accepted or waits (pod-resize.ts). */
  resize(pod: PodRecord, before: Allocation): void;
  deleteApiPod(pod: PodRecord, deletion: { requestedAt: number; gracePeriodSeconds: number }): void;
}

/**
 * Applies `desired` and returns the pods it touched. Until `sourcesReady`, nothing is stopped for
 * being unwanted: the agent cannot kill what it is about to adopt.
 */
export function applyDesired(loop: DesiredLoop, desired: ReadonlyMap<PodKey, PodSpec>, sourcesReady: boolean): Set<PodKey> {
  const touched = new Set<PodKey>();
  // Read once per walk and grown as pods are admitted: a thousand new pods are not a thousand walks of every pod.
  let admitted: PodRequests[] | undefined;
  for (const [key, spec] of desired) {
    const pod = loop.pods.get(key);
    if (!pod || pod.spec.configHash !== spec.configHash || pod.replacement || spec.api?.deletion) touched.add(key);
    if (spec.api?.deletion) {
      // Deleted through the API: stop it with the grace asked for; never start one being deleted.
      if (pod && pod.spec.uid === spec.uid) loop.deleteApiPod(pod, spec.api.deletion);
      continue;
    }
    if (!pod) {
      loop.pods.set(key, loop.admit(spec, (admitted ??= loop.admittedNow())));
    } else if (pod.deletionRequestedAt === undefined) {
      const changed = pod.spec.configHash === spec.configHash ? undefined : inPlaceChanges(pod.spec, spec);
      if (changed) {
        const before = currentAllocation(pod);
        applyInPlaceUpdate(pod, spec, changed);
        loop.resize(pod, before);
      } else if (pod.spec.configHash !== spec.configHash) {
        pod.replacement = spec;
        loop.requestDeletion(pod, "replaced");
      } else {
        if (spec.api && pod.spec.uid === spec.uid) {
          // An API pod's hash covers its spec only: new labels or annotations are taken as they are,
          // and served from its next pass.
          if (apiMetadata(pod.spec) !== apiMetadata(spec)) touched.add(key);
          pod.spec = spec;
        } else if (pod.spec.source !== spec.source) {
          // Renamed, content unchanged: the same pod, keeping the uid its containers carry, now
          // read from the new file (the uid a file would give is a hash of its path too).
          pod.spec = { ...pod.spec, source: spec.source };
          touched.add(key);
        }
        if (pod.resize?.pending) {
          // A resize that waits is tried again on each walk: pods that went away may have made room.
          loop.resize(pod, currentAllocation(pod));
          touched.add(key);
        }
      }
    } else if (pod.deletionCause !== "shutdown" && (pod.replacement?.configHash !== spec.configHash || pod.replacement.source !== spec.source)) {
      // Wanted again (or changed again) while still stopping: run the newest spec afterwards.
      pod.replacement = spec;
    }
  }
  if (sourcesReady) {
    for (const [key, pod] of loop.pods) {
      if (desired.has(key) || pod.deletionCause === "shutdown") continue;
      pod.replacement = undefined;
      loop.requestDeletion(pod, "removed");
      touched.add(key);
    }
  }
  return touched;
}

/** What an API pod carries beside its spec hash (read anew on every scan, so compared by value). */
function apiMetadata(spec: PodSpec): string {
  return JSON.stringify([spec.api, spec.labels, spec.annotations]);
}
