/**
 * What a container spec becomes for a plain process: its environment (with the volume paths it
 * cannot mount) and the check that its command can be executed at all.
 */
import { accessSync, constants, mkdirSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { ContainerSpec, PodSpec } from "../../manifest/types.ts";
import { volumeEnvName } from "../../manifest/runtime-rules.ts";
import { podHostname } from "../pod-hostname.ts";

export { volumeEnvName };

/** containerd's default PATH for a container whose image sets none. */
export const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface EnvInput {
  pod: PodSpec;
  container: ContainerSpec;
  podDir: string;
  /** Where an emptyDir volume of this pod lives on the host. */
  volumeDir: (name: string) => string;
}

/**
 * PATH (containerd's default), HOME (the pod directory) and HOSTNAME (the pod's hostname, which a
 * container runtime gives every container) unless the spec sets them, one
 * `MINIKUBELET_VOLUME_<NAME>` per volume mount (its host path, whether or not it is also bound at its mountPath),
 * then the spec's env, later entries winning. Creates emptyDir (and DirectoryOrCreate) directories.
 */
export function containerEnv(input: EnvInput, fail: (message: string) => never): Record<string, string> {
  const { pod, container } = input;
  const env: Record<string, string> = { PATH: DEFAULT_PATH, HOME: input.podDir, HOSTNAME: podHostname(pod) };
  for (const mount of container.volumeMounts) env[volumeEnvName(mount.name)] = mountSource(input, mount, fail);
  for (const { name, value } of container.env) env[name] = value;
  return env;
}

/** The host path a volume mount shows: the volume's directory (with its subPath), created where the volume is the pod's own. */
export function mountSource(input: Pick<EnvInput, "pod" | "volumeDir">, mount: ContainerSpec["volumeMounts"][number], fail: (message: string) => never): string {
  const volume = input.pod.volumes.find((v) => v.name === mount.name);
  if (!volume) return fail(`volumeMounts: volume "${mount.name}" is not defined in the pod`);
  // A downwardAPI volume is where an emptyDir would be, filled by the kubelet before the start.
  let path = volume.type === "hostPath" ? volume.path : input.volumeDir(volume.name);
  if (volume.type === "emptyDir" || (volume.type === "hostPath" && volume.hostPathType === "DirectoryOrCreate")) mkdirSync(path, { recursive: true });
  if (mount.subPath) {
    path = join(path, mount.subPath);
    if (volume.type === "emptyDir") mkdirSync(path, { recursive: true });
  }
  return path;
}


/**
 * Fails, in containerd's words, when `command` cannot be executed: a path that is missing or not
 * executable, or a bare name found nowhere on `path` (searched from `cwd`).
 */
export function checkExecutable(command: string, path: string, cwd: string, fail: (message: string) => never): void {
  if (command.includes("/")) {
    const file = isAbsolute(command) ? command : join(cwd, command);
    try {
      accessSync(file, constants.X_OK);
    } catch {
      fail(`exec: "${command}": stat ${file}: no such file or directory, or not executable`);
    }
    return;
  }
  if (!Bun.which(command, { PATH: path, cwd })) fail(`exec: "${command}": executable file not found in $PATH`);
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
