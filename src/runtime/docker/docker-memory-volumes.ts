/**
 * A memory-backed emptyDir on docker: an engine volume on a tmpfs (the local driver's
 * `type=tmpfs`), sized as the kubelet sizes one (manifest/memory-medium.ts), that every container of the pod mounts by name, so they
 * share it as they share a disk emptyDir. The engine mounts it, so the agent need not be root; its
 * pages are charged to the cgroup of the container writing them (the pod's memory). Made with the
 * sandbox, removed with it, labelled like it so only this agent's are touched.
 */
import type Dockerode from "dockerode";
import { join } from "node:path";
import type { MountEntry } from "../../host/mountinfo.ts";
import type { PodSpec, Volume } from "../../manifest/types.ts";
import { isNotFound } from "./docker-errors.ts";
import { LABEL, sandboxLabels } from "../labels.ts";
import { memoryMediumSizeBytes } from "../../manifest/memory-medium.ts";
import { podFsGroup } from "../../manifest/fs-group.ts";

export interface VolumeEngine {
  docker: Dockerode;
  owner: string | undefined;
  ownLabels(...extra: string[]): string[];
}

/** The engine volume holding a pod's memory emptyDir. */
export function memoryVolumeName(podUid: string, volume: string): string {
  return `minikubelet-${podUid}-${volume}`;
}

export function isMemoryEmptyDir(volume: Volume | undefined): boolean {
  return volume?.type === "emptyDir" && volume.medium === "Memory";
}

/** Creates the pod's memory volumes; one already there (the sandbox set up again) is kept, contents and all. */
export async function ensureMemoryVolumes(engine: VolumeEngine, pod: PodSpec): Promise<void> {
  for (const volume of pod.volumes) {
    if (volume.type !== "emptyDir" || volume.medium !== "Memory") continue;
    const size = memoryMediumSizeBytes(pod, volume);
    // A tmpfs's own mode is 1777; with the pod's fsGroup it is the group's and setgid too, as
    // SetVolumeOwnership leaves the kubelet's tmpfs emptyDir (3777).
    const fsGroup = podFsGroup(pod);
    const o = [...(fsGroup === undefined ? ["mode=1777"] : ["mode=3777", `gid=${fsGroup}`]), ...(size ? [`size=${size}`] : [])].join(",");
    const { [LABEL.sandbox]: _sandbox, ...labels } = sandboxLabels(pod, engine.owner);
    // The local driver answers a create of an existing name with that volume.
    await engine.docker.createVolume({ Name: memoryVolumeName(pod.uid, volume.name), Driver: "local", DriverOpts: { type: "tmpfs", device: "tmpfs", o }, Labels: labels });
  }
}

/**
 * Where a subPath into a memory emptyDir is on the host: a directory in the volume's tmpfs, bound
 * as any host directory is (the engine mounts no part of a named volume before API 1.45). The tmpfs
 * is where the engine mounted it for the pause container, which holds it for the pod's life; an
 * agent that cannot see it mounted there (not on the engine's host, or not root) is told so, rather
 * than bind a directory of the disk below it.
 */
export async function memorySubPathSource(docker: Dockerode, volume: string, subPath: string, mounts: readonly MountEntry[] | undefined): Promise<{ tmpfs: string; source: string }> {
  const mountpoint = (await docker.getVolume(volume).inspect()).Mountpoint;
  if (!mounts?.some((mount) => mount.mountPoint === mountpoint && mount.fsType === "tmpfs")) {
    throw new Error(`subPath ${JSON.stringify(subPath)} into memory emptyDir volume ${volume}: its tmpfs is not mounted at ${mountpoint} where this agent can reach it (the agent must run as root beside the engine)`);
  }
  return { tmpfs: mountpoint, source: join(mountpoint, subPath) };
}

/** Removes this agent's memory volumes of a pod; gone already is fine. */
export async function removeMemoryVolumes(engine: VolumeEngine, podUid: string): Promise<void> {
  const listed = await engine.docker.listVolumes({ filters: { label: engine.ownLabels(`${LABEL.podUid}=${podUid}`) } });
  for (const volume of listed.Volumes ?? []) {
    await engine.docker
      .getVolume(volume.Name)
      .remove()
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  }
}
