/**
 * The runtime an agent runs its pods with, made for its database: its own root directory (derived
 * from the database, never shared; the process runtime's records in a directory of their own on a
 * tmpfs, named by the database too), the database's identity on everything it creates, and, for
 * docker, the node's lock on the engine. Each runtime is loaded only when chosen.
 */
import { makePrivateDir, tightenMode } from "../host/private-files.ts";
import { join } from "node:path";
import { runtimeStateRootOf } from "../store/db-path.ts";
import { volatileStateBase } from "../host/volatile-state.ts";
import type { ContainerLogPolicy } from "../runtime/log-rotation-policy.ts";
import type { Runtime } from "../runtime/runtime.ts";

export type RuntimeKind = "process" | "docker";

export interface RuntimeChoice {
  runtime: Runtime;
  /** The directory the runtime keeps this agent's files in. */
  root: string;
  /** Where the process runtime keeps its containers' records, when apart from `root` (on a tmpfs). */
  stateRoot?: string;
  /** Where an attempt's output file is, for `logs` (the process runtime keeps one per attempt). */
  logPathOf?: (podUid: string, containerId: string) => string | undefined;
  /** Releases what the agent holds in the runtime beyond its database's lock (docker: the node). */
  unlock?: () => Promise<void>;
  /** Why resource limits cannot be enforced, said once at start-up (the process runtime without cgroups). */
  limitsProblem?: string;
}

export interface RuntimeOwnership {
  kind: RuntimeKind;
  /** The agent's own runtime root (runtimeRootOf its database). */
  root: string;
  /** Its database's identity, put on everything the runtime creates. */
  owner: string;
  node: string;
  dbPath: string;
  logPolicy: ContainerLogPolicy;
  /** `--pod-max-pids`; undefined is no limit. */
  podMaxPids: number | undefined;
  /** docker: the sandbox image; default the runtime's. */
  pauseImage?: string;
  /** Hears what the runtime leaves alone and why (the process runtime's unreadable records). */
  log: (message: string) => void;
}

/**
 * The process runtime's directories for the agent of `dbPath`, whose runtime root is `root`: its
 * root under it, and the records a start and an exit write on a tmpfs when the host has one
 * (process-files.ts), else under the root too.
 */
export function processRuntimeDirs(root: string, dbPath: string): { rootDir: string; stateDir: string } {
  const rootDir = join(root, "process");
  const base = volatileStateBase();
  return { rootDir, stateDir: base === undefined ? rootDir : join(runtimeStateRootOf(dbPath, base), "process") };
}

export async function createRuntime(agent: RuntimeOwnership): Promise<RuntimeChoice> {
  const { root, owner, logPolicy } = agent;
  // The root holds every container's env, logs and volumes: 0700, an older agent's 0755 narrowed.
  makePrivateDir(root);
  tightenMode(root);
  switch (agent.kind) {
    case "process": {
      const { ProcessRuntime } = await import("../runtime/process/process.ts");
      const { ProcessLayout } = await import("../runtime/process/process-files.ts");
      const { containerLogPath } = await import("../runtime/container-log-file.ts");
      const { rootDir, stateDir } = processRuntimeDirs(root, agent.dbPath);
      makePrivateDir(rootDir);
      makePrivateDir(stateDir);
      const layout = new ProcessLayout(rootDir, stateDir);
      const runtime = new ProcessRuntime({ rootDir, stateDir, owner, logPolicy, podPidsLimit: agent.podMaxPids, log: agent.log });
      return { runtime, root: rootDir, ...(stateDir !== rootDir && { stateRoot: stateDir }), logPathOf: (uid, id) => containerLogPath(layout.logDir(uid, id)), limitsProblem: runtime.cgroupProblem };
    }
    case "docker": {
      const { DockerRuntime } = await import("../runtime/docker/docker.ts");
      const volumeRoot = join(root, "volumes");
      // The runtime makes it 0700 with the first emptyDir; an older agent's is narrowed here.
      tightenMode(volumeRoot);
      const runtime = new DockerRuntime({ pauseImage: agent.pauseImage, volumeRoot, owner, logPolicy, nodeResources: { podMaxPids: agent.podMaxPids } });
      // The node's label namespace on the engine is the agent's too: one agent per node, whatever its database.
      const lock = await runtime.lockNode(agent.node, agent.dbPath).catch(async (error) => {
        await runtime.close();
        throw error;
      });
      return { runtime, root: volumeRoot, unlock: () => lock.release() };
    }
  }
}
