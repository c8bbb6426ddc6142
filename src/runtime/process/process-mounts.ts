/**
 * Volumes at their mountPath for the process runtime. Run as root, the monitor gives the container a
 * private mount namespace in which each volume's host directory is bind-mounted at its mountPath
 * (read-only where asked), leaving the host's view as it was. A mountPath must already exist on the
 * host, as what it is mounted over (a directory for a directory, a file for a file): creating one
 * would change the host's own filesystem. Where any mount cannot be made so (not root, a missing
 * mountPath), the container runs as before, finding its volumes in MINIKUBELET_VOLUME_<NAME>, and
 * the kubelet says why in one Warning event.
 * An exec in such a container (kubectl exec, exec probes) enters its mount namespace (process-monitor.ts's enterArgv).
 */
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";

export interface BindMount {
  source: string;
  target: string;
  readOnly: boolean;
}

export type MountPlan = { binds: BindMount[] } | { problem: string };

/** The binds for `mounts` (host path, mountPath, readOnly), or why none can be made. */
export function planBindMounts(mounts: BindMount[], isRoot = process.getuid?.() === 0): MountPlan {
  if (mounts.length === 0) return { binds: [] };
  if (!isRoot) return { problem: "the agent does not run as root, so it cannot give the container a mount namespace: its volumes are at their host paths, in $MINIKUBELET_VOLUME_<NAME>" };
  for (const mount of mounts) {
    const why = targetProblem(mount);
    if (why) return { problem: `mountPath ${JSON.stringify(mount.target)} ${why}: the container's volumes are at their host paths, in $MINIKUBELET_VOLUME_<NAME>` };
  }
  return { binds: mounts };
}

function targetProblem({ source, target }: BindMount): string | undefined {
  if (!isAbsolute(target)) return "is not an absolute path";
  let targetIsDir: boolean;
  try {
    targetIsDir = statSync(target).isDirectory();
  } catch {
    return "does not exist on the host, and is not created there";
  }
  let sourceIsDir: boolean;
  try {
    sourceIsDir = statSync(source).isDirectory();
  } catch {
    return `cannot be bound: its volume's path ${JSON.stringify(source)} does not exist`;
  }
  if (sourceIsDir !== targetIsDir) return `is a ${targetIsDir ? "directory" : "file"} on the host and its volume's path a ${sourceIsDir ? "directory" : "file"}`;
  return undefined;
}

/** The monitor's options for the binds. */
export function bindArgs(binds: BindMount[]): string[] {
  return binds.flatMap((bind) => [bind.readOnly ? "--bind-ro" : "--bind", bind.source, bind.target]);
}
