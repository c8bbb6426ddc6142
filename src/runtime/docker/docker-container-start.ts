/**
 * Creating and starting one container over the engine (CRI's CreateContainer and StartContainer in
 * one call, as the loop asks for them): its mounts prepared on the host, its create options built
 * (docker-container-config.ts), then create and start. A repeated call finds its attempt's name
 * taken: a running container of this agent is reused, a dead one replaced once, anyone else's is an
 * error. Every failure of the container is a ContainerStartError with the kubelet's reason; an
 * engine that does not answer is EngineUnreachableError, which counts no attempt.
 */
import { podFsGroup } from "../../manifest/fs-group.ts";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { chownGroup } from "../../host/chown-group.ts";
import { makePrivateDir } from "../../host/private-files.ts";
import { dirname } from "node:path";
import type Dockerode from "dockerode";
import { containerCreateOptions, resolveMounts, terminationFilesDir, type ResolvedMount } from "./docker-container-config.ts";
import { etcHostsMount } from "./docker-etc-hosts.ts";
import { memorySubPathSource } from "./docker-memory-volumes.ts";
import { parseMountinfo, readMountinfo } from "../../host/mountinfo.ts";
import { createTerminationFile } from "../termination-message.ts";
import { dockerMessage, dockerStatusCode, isConflict, isNotModified, rethrowUnreachable } from "./docker-errors.ts";
import type { NodeResourcePolicy } from "./docker-resources.ts";
import type { ContainerLogPolicy } from "../log-rotation-policy.ts";
import { ContainerStartError, type ContainerConfig } from "../runtime.ts";

export interface ContainerEngine {
  docker: Dockerode;
  /** Where emptyDir volumes are created, as <root>/<podUid>/<volume>. */
  volumeRoot: string;
  /** The database identity put on what is created (labels.ts); undefined in tests without one. */
  owner: string | undefined;
  logPolicy: ContainerLogPolicy;
  nodeResources: NodeResourcePolicy;
  /** Whether labels prove this agent's database created the container. */
  owns(labels: Record<string, string>): boolean;
  /** Removes a container; already gone is fine. */
  remove(id: string): Promise<void>;
  /** Where the engine is expected, for the error when it does not answer. */
  endpoint(): string;
  /** Told of each container this call started (not of one it reused). */
  started(id: string): void;
}

/** Creates and starts the container; returns its id. */
export async function createAndStart(engine: ContainerEngine, config: ContainerConfig, retryOnNameConflict = true): Promise<string> {
  const name = config.container.name;
  let options: Dockerode.ContainerCreateOptions;
  try {
    const mounts = resolveMounts(config.pod, config.container, engine.volumeRoot);
    await placeMemorySubPaths(engine, mounts);
    prepareMounts(mounts, engine.volumeRoot, podFsGroup(config.pod));
    const hosts = etcHostsMount(config, engine.volumeRoot);
    if (hosts) mounts.push(hosts);
    const terminationMount = terminationFileMount(config, mounts, engine.volumeRoot);
    if (terminationMount) mounts.push(terminationMount);
    options = containerCreateOptions(config, mounts, engine.owner, engine.logPolicy, engine.nodeResources);
  } catch (error) {
    throw new ContainerStartError(name, (error as Error).message, "CreateContainerConfigError", { cause: error });
  }
  let container: Dockerode.Container;
  try {
    container = await engine.docker.createContainer(options);
  } catch (error) {
    // No answer from the engine is not a failed start (no attempt is counted): the pass fails and is retried.
    if (dockerStatusCodeMissing(error)) rethrowUnreachable(error, engine.endpoint());
    if (!isConflict(error) || !retryOnNameConflict) {
      throw new ContainerStartError(name, `creating container ${name}: ${dockerMessage(error)}`, "CreateContainerError", {
        cause: error,
      });
    }
    // This attempt's name exists: a call repeated after a crash of ours. Reuse a running one.
    const previous = await engine.docker.getContainer(options.name as string).inspect();
    if (!engine.owns(previous.Config.Labels ?? {})) {
      throw new ContainerStartError(name, `creating container ${name}: the name ${options.name} is taken by a container another agent's database created`, "CreateContainerError", { cause: error });
    }
    if (previous.State.Running) return previous.Id;
    await engine.remove(previous.Id);
    return createAndStart(engine, config, false);
  }
  try {
    await container.start();
  } catch (error) {
    if (isNotModified(error)) return container.id;
    await engine.remove(container.id);
    throw new ContainerStartError(name, `starting container ${name}: ${dockerMessage(error)}`, "StartError", {
      cause: error,
    });
  }
  engine.started(container.id);
  return container.id;
}

/** A subPath into a memory emptyDir becomes a directory in its tmpfs, made and owned as an emptyDir's. */
async function placeMemorySubPaths(engine: ContainerEngine, mounts: ResolvedMount[]): Promise<void> {
  const inMemory = mounts.filter((mount) => mount.memorySubPath);
  if (inMemory.length === 0) return;
  const mountinfo = readMountinfo();
  const entries = mountinfo === undefined ? undefined : parseMountinfo(mountinfo);
  for (const mount of inMemory) {
    const { volume, subPath } = mount.memorySubPath!;
    const { tmpfs, source } = await memorySubPathSource(engine.docker, volume, subPath, entries);
    Object.assign(mount, { source, create: "directory", emptyDir: tmpfs });
  }
}

/**
 * Creates emptyDir directories (world-writable, so a non-root container can write) and *OrCreate
 * paths. The volume root above the emptyDirs is 0700: the engine mounts as root, and no other user
 * of the host reaches what the pods keep there. With the pod's fsGroup, a directory made for a
 * volume of the pod belongs to that group with its setgid bit set, so what a container creates in
 * it is the group's too, as the kubelet's SetVolumeOwnership leaves an emptyDir.
 */
function prepareMounts(mounts: ResolvedMount[], volumeRoot: string, fsGroup: number | undefined): void {
  for (const mount of mounts) {
    if (mount.create === "directory" && !existsSync(mount.source) && mount.memorySubPath) {
      placeInVolumeMode(mount.source, mount.emptyDir!, fsGroup);
    } else if (mount.create === "directory" && !existsSync(mount.source)) {
      if (mount.source.startsWith(`${volumeRoot}/`)) makePrivateDir(volumeRoot);
      mkdirSync(mount.source, { recursive: true });
      if (mount.emptyDir !== undefined && fsGroup !== undefined) {
        // The emptyDir's directory and those of a subPath in it, from the deepest up.
        const dirs: string[] = [];
        for (let dir = mount.source; dir.length >= mount.emptyDir.length; dir = dirname(dir)) dirs.push(dir);
        for (const dir of dirs) chownGroup(dir, fsGroup);
        setgidWritable(dirs);
      } else {
        chmodSync(mount.source, 0o777); // mkdir's mode is cut by the umask
      }
    } else if (mount.create === "file" && !existsSync(mount.source)) {
      mkdirSync(dirname(mount.source), { recursive: true });
      writeFileSync(mount.source, "");
    }
  }
}

/**
 * The attempt's termination message file (termination-message.ts), bound at the container's
 * terminationMessagePath; none where a volume is already mounted there, which the engine would
 * refuse as a duplicate mount point.
 */
function terminationFileMount(config: ContainerConfig, mounts: ResolvedMount[], volumeRoot: string): ResolvedMount | undefined {
  const target = config.container.terminationMessagePath;
  if (!target || mounts.some((mount) => mount.target === target)) return undefined;
  makePrivateDir(volumeRoot);
  const dir = terminationFilesDir(volumeRoot, config.pod.uid);
  return { source: createTerminationFile(dir, config.container.name, config.attempt), target, readOnly: false };
}

/** A transport failure carries no HTTP status from the engine. */
function dockerStatusCodeMissing(error: unknown): boolean {
  return error instanceof Error && dockerStatusCode(error) === undefined;
}

/**
 * A subPath's directories in a memory emptyDir's tmpfs (`volume`, which the engine mounted): the
 * fsGroup's, with the volume's own mode, as the kubelet makes a subPath (SafeMakeDir with the
 * volume's GetMode: 3777 for a tmpfs that an fsGroup owns).
 */
function placeInVolumeMode(source: string, volume: string, fsGroup: number | undefined): void {
  mkdirSync(source, { recursive: true });
  const dirs: string[] = [];
  for (let dir = source; dir.length > volume.length; dir = dirname(dir)) dirs.push(dir);
  if (fsGroup !== undefined) for (const dir of dirs) chownGroup(dir, fsGroup);
  chmodWithSpecialBits((statSync(volume).mode & 0o7777).toString(8), dirs);
}

/**
 * chmod 2777: Bun's fs.chmod drops the setgid bit (it keeps only the permission bits), so the
 * system's chmod sets it. Only a pod with an fsGroup gets here, once per directory it makes.
 */
function setgidWritable(dirs: string[]): void {
  chmodWithSpecialBits("2777", dirs);
}

/** The system's chmod, which sets the setgid and sticky bits Bun's fs.chmod drops. */
function chmodWithSpecialBits(octal: string, paths: string[]): void {
  const result = spawnSync("chmod", [octal, ...paths], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`chmod ${octal} ${paths.join(" ")}: ${result.stderr || result.error?.message || `exit ${result.status}`}`);
}
