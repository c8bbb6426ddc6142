/**
 * The process runtime's pod sandboxes: per pod uid, a directory on disk (`pods/<uid>/`,
 * process-files.ts) holding its emptyDir volumes and its containers' logs, and a state directory
 * holding its `sandbox.json` and its containers' records. There is no pause process and no
 * network namespace: every pod's IP is the host's loopback.
 */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Clock } from "../../clock.ts";
import type { PodSpec } from "../../manifest/types.ts";
import { sandboxLabels } from "../labels.ts";
import { ProcessLayout, SAFE_NAME, ensureDir, writeJson, type ContainerDirEntry, type SandboxRecord } from "./process-files.ts";
import type { ProcessOwnership } from "./process-ownership.ts";
import type { Sandbox, SandboxInfo } from "../runtime.ts";
import { memoryMediumFallback, mountTmpfs, unmountTmpfs } from "./process-tmpfs.ts";
import { memoryMediumSizeBytes } from "../../manifest/memory-medium.ts";

export interface ProcessSandboxesOptions {
  layout: ProcessLayout;
  clock: Clock;
  /** The identity put in every sandbox.json's labels; undefined leaves the label off. */
  owner: string | undefined;
  ownership: ProcessOwnership;
  /** Removes one container of a pod being removed, refusing one not provably ours. */
  removeContainer(container: ContainerDirEntry): Promise<void>;
}

export class ProcessSandboxes {
  constructor(private readonly options: ProcessSandboxesOptions) {}

  /** Creates the pod's directory, its emptyDir volumes (a tmpfs for a memory medium, as root), a tmpfs for each secret volume (as root) and its sandbox.json; idempotent. */
  async run(pod: PodSpec): Promise<Sandbox> {
    const { layout } = this.options;
    if (!SAFE_NAME.test(pod.uid)) throw new Error(`pod ${pod.key}: uid "${pod.uid}" is not usable as a directory name`);
    ensureDir(layout.podDir(pod.uid));
    ensureDir(join(layout.podStateDir(pod.uid), "containers"));
    const warnings: string[] = [];
    for (const volume of pod.volumes) {
      if (volume.type === "secret") {
        // The kubelet keeps a Secret's files off the disk (its secret volume is memory-backed);
        // without root they are written to the directory on disk, as the other filled volumes are.
        const path = layout.volumeDir(pod.uid, volume.name);
        ensureDir(path);
        await mountTmpfs(path, undefined);
        continue;
      }
      if (volume.type !== "emptyDir") continue;
      const path = layout.volumeDir(pod.uid, volume.name);
      ensureDir(path);
      if (volume.medium !== "Memory") continue;
      const why = await mountTmpfs(path, memoryMediumSizeBytes(pod, volume));
      if (why) warnings.push(memoryMediumFallback(volume.name, why));
    }
    const file = join(layout.sandboxDir(pod.uid), "sandbox.json");
    if (!existsSync(file)) {
      const record: SandboxRecord = { id: pod.uid, podUid: pod.uid, labels: sandboxLabels(pod, this.options.owner), createdAt: this.options.clock.now() };
      writeJson(file, record);
    }
    return { id: pod.uid, ip: "127.0.0.1", podUid: pod.uid, ...(warnings.length > 0 && { warnings }) };
  }

  /**
   * Removes the pod's containers, then its directories; a pod already gone is a no-op. Refused, with
   * nothing removed, when its sandbox.json does not prove it ours; stops at the first container that
   * is not provably ours, leaving the directories.
   */
  async remove(id: string): Promise<void> {
    const { layout, ownership } = this.options;
    if (!SAFE_NAME.test(id)) return;
    const dir = layout.podDir(id);
    const stateDir = layout.podStateDir(id);
    if (!existsSync(dir) && !existsSync(stateDir)) return;
    if (!ownership.removable(`sandbox ${id}`, ownership.sandbox(layout.sandboxDir(id)))) return;
    for (const entry of layout.podContainers(id)) await this.options.removeContainer(entry);
    // A memory emptyDir's tmpfs goes first, or removing the directory would stop at its mount point.
    const volumes = join(dir, "volumes");
    if (existsSync(volumes)) for (const name of readdirSync(volumes)) await unmountTmpfs(join(volumes, name));
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    rmSync(stateDir, { recursive: true, force: true, maxRetries: 3 });
  }

  /** The sandboxes provably ours; every other pod directory is left out (and reported once). */
  async list(): Promise<SandboxInfo[]> {
    const { layout, ownership } = this.options;
    const sandboxes: SandboxInfo[] = [];
    for (const uid of layout.scanPods()) {
      const dir = layout.sandboxDir(uid);
      const record = ownership.listed(`sandbox ${uid}`, dir, ownership.sandbox(dir));
      if (record) sandboxes.push({ id: record.id, podUid: record.podUid, ip: "127.0.0.1", labels: record.labels, ready: true });
    }
    return sandboxes;
  }
}
