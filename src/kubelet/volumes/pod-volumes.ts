/**
 * Keeps the volumes the kubelet fills itself current, as its volume manager does on every sync:
 * downwardAPI, configMap, secret and projected, written before the containers start and again
 * whenever what they show changed (labels or annotations of the pod, an edited ConfigMap or Secret,
 * a refreshed token). Each write is atomic (atomic-writer.ts). A volume that cannot be set up holds
 * the containers back (the pod stays ContainerCreating) with a FailedMount event, in the kubelet's
 * words; it is tried again when the object it waits for arrives (the source's change wakes the
 * pod), or after a short wait for a failure of the disk.
 */
import { podFsGroup } from "../../manifest/fs-group.ts";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { DATA_DIR, writeAtomically, type PayloadFile } from "./atomic-writer.ts";
import { isFilledVolume } from "../../manifest/types.ts";
import type { PodRecord } from "../pod-state.ts";
import type { SyncContext } from "../sync-context.ts";
import { VolumeSetUpError, volumePayload } from "./object-payload.ts";

const MOUNT_RETRY_MS = 2000;
/** What fsGroup adds to each file of these read-only volumes (the kubelet's roMask). */
const GROUP_READ = 0o440;

/** What was last written per pod and volume, so an unchanged pass writes nothing. */
const written = new WeakMap<PodRecord, Map<string, string>>();

/**
 * True when every such volume of the pod is up to date (or it has none). With `refresh`, only
 * volumes written already (by a start, or by the agent before a restart) are looked at: the end of
 * a pass keeps them current, and a start is what reports one that cannot be set up.
 */
export function syncPodVolumes(ctx: SyncContext, pod: PodRecord, refresh = false): boolean {
  let ready = true;
  const fsGroup = podFsGroup(pod.spec);
  const last = written.get(pod) ?? new Map<string, string>();
  written.set(pod, last);
  for (const volume of pod.spec.volumes) {
    if (!isFilledVolume(volume)) continue;
    const dir = ctx.runtime.podVolumeDir(pod.spec, volume.name);
    // Written by an earlier agent counts too: a restarted agent keeps its adopted pods' volumes current.
    const present = existsSync(join(dir, DATA_DIR));
    if (refresh && !present && !last.has(volume.name)) continue;
    try {
      const payload = volumePayload(pod.spec, volume, {
        facts: { createdAt: pod.createdAt, allocatable: ctx.allocatable },
        ...(ctx.objects && { objects: ctx.objects }),
        ...(ctx.tokens && { tokens: ctx.tokens }),
      });
      if (payload.nextAt !== undefined) ctx.wakeAt(pod, payload.nextAt);
      // With an fsGroup the files are the group's and readable by it (SetVolumeOwnership's read-only mask).
      const files = fsGroup === undefined ? payload.files : payload.files.map((file) => ({ ...file, mode: file.mode | GROUP_READ }));
      const key = payloadKey(files);
      // A sandbox made again (the old one died) comes without the volumes removed with the old one.
      if (last.get(volume.name) === key && present) continue;
      if (writeAtomically(dir, files, ctx.clock.now(), fsGroup)) {
        ctx.log(`pod ${pod.spec.key}: wrote ${volume.type} volume ${volume.name}`);
      }
      last.set(volume.name, key);
    } catch (error) {
      if (refresh && present) {
        // A volume set up already keeps what it holds while its object is away (the kubelet keeps the mount).
        continue;
      }
      ready = false;
      if (error instanceof VolumeSetUpError && error.quietUntil !== undefined && error.quietUntil > ctx.clock.now()) {
        // The object is being read: its arrival wakes the pod; the timer reports it if it does not come.
        ctx.wakeAt(pod, error.quietUntil);
        continue;
      }
      const message = error instanceof Error ? error.message : String(error);
      ctx.event(pod, "Warning", "FailedMount", undefined, `MountVolume.SetUp failed for volume ${JSON.stringify(volume.name)} : ${message}`);
      // An object not there yet wakes the pod when it comes; anything else is tried again shortly.
      if (!(error instanceof VolumeSetUpError)) ctx.wakeAt(pod, ctx.clock.now() + MOUNT_RETRY_MS);
      else if (error.retryAt !== undefined) ctx.wakeAt(pod, error.retryAt);
    }
  }
  return ready;
}

function payloadKey(files: readonly PayloadFile[]): string {
  return files.map((file) => `${file.path}\0${file.mode}\0${Bun.hash(file.content)}`).join("\n");
}
