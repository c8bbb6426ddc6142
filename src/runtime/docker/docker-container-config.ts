/**
 * Pure translation of a pod and a container into the engine's create options: the sandbox (pause)
 * container and the containers that join it. No I/O here, so the mapping is unit tested alone.
 */
import { podHostname } from "../pod-hostname.ts";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ContainerCreateOptions } from "dockerode";
import { DEFAULT_LOG_POLICY, type ContainerLogPolicy } from "../log-rotation-policy.ts";
import { isFilledVolume, type ContainerSpec, type PodSpec, type Volume } from "../../manifest/types.ts";
import { resourceHostConfig, type NodeResourcePolicy } from "./docker-resources.ts";
import { containerLabels, containerName, sandboxLabels, sandboxName } from "../labels.ts";
import type { ContainerConfig } from "../runtime.ts";
import { isMemoryEmptyDir, memoryVolumeName } from "./docker-memory-volumes.ts";
import { securityCreateOptions } from "./docker-security.ts";
import { normalizeSysctlName, podSysctls } from "../../manifest/sysctls.ts";

/** The container's terminationMessagePath, named as the kubelet's annotation names it. */
export const TERMINATION_MESSAGE_PATH_LABEL = "io.kubernetes.container.terminationMessagePath";

/** The pause container: owns the pod's network (bridge, or the host's) and a shareable IPC namespace, with the pod's sysctls set in them. */
export function sandboxCreateOptions(pod: PodSpec, pauseImage: string, owner?: string): ContainerCreateOptions {
  const sysctls = podSysctls(pod);
  return {
    name: sandboxName(pod),
    Image: pauseImage,
    Labels: sandboxLabels(pod, owner),
    // The engine refuses a hostname on a host-network container; the kubelet uses the pod name.
    Hostname: pod.hostNetwork ? undefined : podHostname(pod),
    HostConfig: {
      NetworkMode: pod.hostNetwork ? "host" : "bridge",
      IpcMode: "shareable",
      RestartPolicy: { Name: "no" },
      // The pod's sysctls go to the namespaces the sandbox owns, as the CRI's LinuxPodSandboxConfig carries them (admission let only safe ones through).
      ...(sysctls.length > 0 && { Sysctls: Object.fromEntries(sysctls.map(({ name, value }) => [normalizeSysctlName(name), value])) }),
      // The engine unmounts a tmpfs volume when no container has it, and its contents with it: the
      // pause container holds the pod's memory emptyDirs for the pod's life, as the kubelet's
      // tmpfs on the host does, so a container restarted after a crash finds what it wrote.
      Mounts: pod.volumes.filter(isMemoryEmptyDir).map((volume) => ({ Type: "volume" as const, Source: memoryVolumeName(pod.uid, volume.name), Target: `/memory-volumes/${volume.name}` })),
    },
  };
}

/** A host directory (or a memory emptyDir's engine volume, by name) bind-mounted into a container, resolved from a volumeMount. */
export interface ResolvedMount {
  /** The directory or file on the host. */
  source: string;
  target: string;
  readOnly: boolean;
  /** emptyDir directories are created by the runtime; hostPath ones only with *OrCreate types. */
  create?: "directory" | "file";
  /** An emptyDir's own directory (the source, or above its subPath): what fsGroup owns. */
  emptyDir?: string;
  /**
   * A subPath into a memory emptyDir's engine volume: the source is found on the host when the
   * container is created (docker-memory-volumes.ts, memorySubPathSource).
   */
  memorySubPath?: { volume: string; subPath: string };
}

/** Where a pod's emptyDir lives on the host: one directory per pod uid, one per volume inside it. */
export function emptyDirPath(volumeRoot: string, podUid: string, volumeName: string): string {
  return join(podVolumeDir(volumeRoot, podUid), volumeName);
}

/**
 * Where a pod's termination message files are, beside its emptyDirs: a volume name is a DNS label,
 * so it never starts with a dot, and the files go with the pod's directory.
 */
export function terminationFilesDir(volumeRoot: string, podUid: string): string {
  return join(podVolumeDir(volumeRoot, podUid), ".termination-messages");
}

/**
 * The default root of the emptyDir volumes: /var/lib/minikubelet/pods as root, else
 * $XDG_STATE_HOME (or ~/.local/state)/minikubelet/pods.
 */
export function defaultVolumeRoot(): string {
  if (process.getuid?.() === 0) return "/var/lib/minikubelet/pods";
  const state = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(state, "minikubelet", "pods");
}

export function podVolumeDir(volumeRoot: string, podUid: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(podUid) || podUid === "." || podUid === "..") {
    throw new Error(`pod uid ${JSON.stringify(podUid)} cannot name a volume directory under ${volumeRoot}`);
  }
  return join(volumeRoot, podUid);
}

/** Resolves each of the container's volumeMounts against the pod's volumes. */
export function resolveMounts(pod: PodSpec, container: ContainerSpec, volumeRoot: string): ResolvedMount[] {
  return container.volumeMounts.map((mount, index) => {
    const volume: Volume | undefined = pod.volumes.find((v) => v.name === mount.name);
    if (!volume) {
      throw new Error(
        `container ${container.name}: volumeMounts[${index}].name ${JSON.stringify(mount.name)} names no volume of pod ${pod.key}`,
      );
    }
    if (isMemoryEmptyDir(volume)) {
      const name = memoryVolumeName(pod.uid, volume.name);
      // A named engine volume mounts whole: a path inside one is bound from where its tmpfs is.
      if (mount.subPath) return { source: "", target: mount.mountPath, readOnly: mount.readOnly, memorySubPath: { volume: name, subPath: mount.subPath } };
      return { source: name, target: mount.mountPath, readOnly: mount.readOnly };
    }
    const base = volume.type === "hostPath" ? volume.path : emptyDirPath(volumeRoot, pod.uid, volume.name);
    const source = mount.subPath ? join(base, mount.subPath) : base;
    // The kubelet mounts the volumes it fills itself (downwardAPI, configMap, secret, projected) read-only whatever the mount says.
    const readOnly = mount.readOnly || isFilledVolume(volume);
    return { source, target: mount.mountPath, readOnly, create: createKind(volume, !!mount.subPath), ...(volume.type === "emptyDir" && { emptyDir: base }) };
  });
}

function createKind(volume: Volume, hasSubPath: boolean): ResolvedMount["create"] {
  if (volume.type !== "emptyDir" && volume.type !== "hostPath") return undefined;
  if (volume.type === "emptyDir" || hasSubPath) return "directory";
  if (volume.hostPathType === "DirectoryOrCreate") return "directory";
  if (volume.hostPathType === "FileOrCreate") return "file";
  return undefined;
}

/**
 * A container joining the sandbox: network and IPC (and PID with shareProcessNamespace) come from
 * the pause container; an ephemeral container with a target joins the target's PID namespace.
 * Kubernetes `command` replaces ENTRYPOINT and `args` replaces CMD; the engine keeps the image's
 * value for whichever is left unset, and drops the image's CMD once ENTRYPOINT is given, which is
 * the Kubernetes rule too. The engine's json-file driver rotates the output by the
 * kubelet's log limits (its max-file counts the current file, as --container-log-max-files does).
 * Resources become the cgroup settings the kubelet would give the container (docker-resources.ts),
 * and the security context the user, groups and privileges it would (docker-security.ts); the
 * kubelet's OOM score adjustment goes with them.
 */
export function containerCreateOptions(
  config: ContainerConfig,
  mounts: ResolvedMount[],
  owner?: string,
  logPolicy: ContainerLogPolicy = DEFAULT_LOG_POLICY,
  nodeResources: NodeResourcePolicy = {},
): ContainerCreateOptions {
  const { container, pod, sandbox } = config;
  const joined = `container:${sandbox.id}`;
  const security = securityCreateOptions(pod, container.name);
  return {
    ...(security.User !== undefined && { User: security.User }),
    name: containerName(config),
    Image: container.image,
    Entrypoint: container.command.length > 0 ? container.command : undefined,
    Cmd: container.args.length > 0 ? container.args : undefined,
    Env: container.env.map((e) => `${e.name}=${e.value}`),
    WorkingDir: container.workingDir,
    // The kubelet's annotation: where its status finds the termination message file among the mounts.
    Labels: { ...containerLabels(config, owner), [TERMINATION_MESSAGE_PATH_LABEL]: container.terminationMessagePath },
    // As dockershim made them: the container's own stdin (kept open for `kubectl attach -i`), and
    // its terminal. The engine then holds both, and closes stdin after one attach with StdinOnce.
    Tty: container.tty === true,
    OpenStdin: container.stdin === true,
    StdinOnce: container.stdinOnce === true,
    // The spec's stop signal replaces the image's STOPSIGNAL; without one the engine keeps the image's.
    ...(container.stopSignal && { StopSignal: container.stopSignal }),
    HostConfig: {
      NetworkMode: joined,
      IpcMode: joined,
      // An ephemeral container aimed at a container (`kubectl debug --target`) sees that container's processes.
      PidMode: config.targetContainerId ? `container:${config.targetContainerId}` : pod.shareProcessNamespace ? joined : undefined,
      Binds: mounts.map((m) => `${m.source}:${m.target}${m.readOnly ? ":ro" : ""}`),
      RestartPolicy: { Name: "no" },
      LogConfig: { Type: "json-file", Config: { "max-size": String(logPolicy.maxBytes), "max-file": String(logPolicy.maxFiles) } },
      ...resourceHostConfig(container.resources, nodeResources),
      ...security.HostConfig,
      ...(config.oomScoreAdj !== undefined && { OomScoreAdj: config.oomScoreAdj }),
    },
  };
}
