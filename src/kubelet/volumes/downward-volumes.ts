/**
 * Keeps a pod's downwardAPI volumes filled, as the kubelet's volume manager does on every sync:
 * before the containers start, and again whenever what they show changed (a pod updated through
 * the API with new labels or annotations). Each write is atomic (atomic-writer.ts). A volume that
 * cannot be filled holds the containers back with a FailedMount event, and is tried again.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR, writeAtomically } from "./atomic-writer.ts";
import { volumeFiles } from "../env/downward-values.ts";
import type { PodRecord } from "../pod-state.ts";
import type { SyncContext } from "../sync-context.ts";

const MOUNT_RETRY_MS = 2000;

/** What was last written per pod and volume, so an unchanged pass reads no file. */
const written = new WeakMap<PodRecord, Map<string, string>>();

/**
 * True when every downwardAPI volume of the pod is up to date (or it has none). With `refresh`,
 * only volumes written already (by a start, or by the agent before a restart) are looked at: the
 * end of a pass keeps them current, and a start is what reports one that cannot be written.
 */
export function syncDownwardVolumes(ctx: SyncContext, pod: PodRecord, refresh = false): boolean {
  let ready = true;
  for (const volume of pod.spec.volumes) {
    if (volume.type !== "downwardAPI") continue;
    const last = written.get(pod) ?? new Map<string, string>();
    const dir = ctx.runtime.podVolumeDir(pod.spec, volume.name);
    // Written by an earlier agent counts too: a restarted agent keeps its adopted pods' volumes current.
    const present = existsSync(join(dir, DATA_DIR));
    if (refresh && !present && !last.has(volume.name)) continue;
    try {
      const files = volumeFiles(pod.spec, volume, { createdAt: pod.createdAt, allocatable: ctx.allocatable });
      const key = JSON.stringify(files);
      // A sandbox made again (the old one died) comes without the volumes removed with the old one.
      if (last.get(volume.name) === key && present) continue;
      if (writeAtomically(dir, files, ctx.clock.now())) {
        ctx.log(`pod ${pod.spec.key}: wrote downwardAPI volume ${volume.name}`);
      }
      last.set(volume.name, key);
      written.set(pod, last);
    } catch (error) {
      ready = false;
      const message = error instanceof Error ? error.message : String(error);
      ctx.event(pod, "Warning", "FailedMount", undefined, `MountVolume.SetUp failed for volume ${JSON.stringify(volume.name)} : ${message}`);
      ctx.wakeAt(pod, ctx.clock.now() + MOUNT_RETRY_MS);
    }
  }
  return ready;
}
