/**
 * The create half of a process container's start (CRI's CreateContainer): the spec checked against
 * the host, then the container's state directory and its one record (config.json, its labels in
 * it) written before a monitor runs, and its log directory; the monitor creates the log. A start
 * creates no file it does not need: on a filesystem under churn each new inode is a measurable
 * part of a start. Every refusal is a ContainerStartError naming the container, so the loop
 * reports it as the kubelet would a failed start.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock.ts";
import { containerStartProblem } from "../../manifest/runtime-rules.ts";
import { isAdmittedTokenMount } from "../../manifest/service-account-token.ts";
import type { VolumeMount } from "../../manifest/types.ts";
import { limitsFromResources, type CgroupLimits } from "./cgroups.ts";
import { containerLabels } from "../labels.ts";
import { containerIdPrefix, ensureDir, writeJson, type ContainerRecord, type ProcessLayout } from "./process-files.ts";
import { DEFAULT_PATH, checkExecutable, containerEnv, isDirectory, mountSource } from "./process-spec.ts";
import { planBindMounts } from "./process-mounts.ts";
import { podHostsBind } from "./process-etc-hosts.ts";
import { hostAccounts, processSecurity, type HostAccounts } from "./process-security.ts";
import { podHostname } from "../pod-hostname.ts";
import { ContainerStartError, type ContainerConfig } from "../runtime.ts";

export interface CreateContainerInput {
  layout: ProcessLayout;
  config: ContainerConfig;
  /** The identity put in the record's labels; undefined leaves the label off. */
  owner: string | undefined;
  /** pids.max for every container; undefined is no limit. */
  podPidsLimit: number | undefined;
  /** Stamps the record's createdAt. */
  clock: Clock;
  /** The agent's credentials and the host's account files; the host's by default. */
  accounts?: HostAccounts;
}

/** A container whose directory is written and whose process is not started yet. */
export interface CreatedContainer {
  id: string;
  /** Its records. */
  dir: string;
  /** Its log and the log's rotations. */
  logDir: string;
  record: ContainerRecord;
  /** What its cgroup is to enforce. */
  limits: CgroupLimits;
  /** The spec's stdin, stdinOnce and tty, which the monitor honours. */
  stdio: { stdin: boolean; stdinOnce: boolean; tty: boolean };
  /** Why its volumes are not at their mountPath (process-mounts.ts); absent when they are, or it has none. */
  mountProblem?: string;
}

/** Checks the container against the host and writes its directory; throws ContainerStartError before writing anything. */
export function createContainerDir(input: CreateContainerInput): CreatedContainer {
  const { layout, config } = input;
  const { container, pod } = config;
  const podUid = config.sandbox.podUid;
  const podDir = layout.podDir(podUid);
  const fail = (message: string): never => {
    throw new ContainerStartError(container.name, `container ${container.name}: ${message}`);
  };
  // validate and the file source refuse such a pod already; a checkpointed spec may predate that.
  const problem = containerStartProblem(container, "process");
  if (problem) fail(problem.field ? `${problem.field}: ${problem.message}` : problem.message);
  const sandboxDir = layout.sandboxDir(podUid);
  if (!existsSync(join(sandboxDir, "sandbox.json"))) fail(`sandbox ${config.sandbox.id} does not exist (runPodSandbox first)`);
  const volumeDir = (name: string) => layout.volumeDir(pod.uid, name);
  const env = containerEnv({ pod, container, podDir, volumeDir }, fail);
  const volumeBinds = container.volumeMounts
    .filter(bindable)
    .map((mount) => ({ source: mountSource({ pod, volumeDir }, mount, fail), target: mount.mountPath, readOnly: mount.readOnly === true }));
  const accounts = input.accounts ?? hostAccounts();
  const isRoot = accounts.uid === 0;
  const security = processSecurity(pod, container.name, accounts, fail);
  const identity = { ...security.identity, ...(config.oomScoreAdj !== undefined && { oomScoreAdj: config.oomScoreAdj }) };
  // Beside the sandbox's record: an earlier version's pod keeps the file its containers have bound.
  const hostsBind = podHostsBind(config, sandboxDir, isRoot);
  const mounts = planBindMounts(hostsBind ? [...volumeBinds, hostsBind] : volumeBinds, isRoot);
  const workingDir = container.workingDir ? resolve(podDir, container.workingDir) : podDir;
  if (!isDirectory(workingDir)) fail(`chdir to workingDir "${workingDir}": no such directory`);
  const argv = [...container.command, ...container.args];
  checkExecutable(argv[0] as string, env.PATH ?? DEFAULT_PATH, workingDir, fail);
  let limits: CgroupLimits = {};
  try {
    limits = limitsFromResources(container.resources, input.podPidsLimit);
  } catch (error) {
    fail(`resources: ${(error as Error).message}`);
  }

  const id = `${containerIdPrefix(podUid)}${container.name}-${config.attempt}-${randomBytes(3).toString("hex")}`;
  const dir = layout.containerDir(podUid, id);
  const logDir = layout.logDir(podUid, id);
  ensureDir(dir);
  ensureDir(logDir);
  const record: ContainerRecord = {
    id,
    podUid,
    sandboxId: config.sandbox.id,
    name: container.name,
    attempt: config.attempt,
    workingDir,
    env,
    command: argv,
    createdAt: input.clock.now(),
    ...("binds" in mounts && mounts.binds.length > 0 && { binds: mounts.binds }),
    ...(Object.keys(identity).length > 0 && { identity }),
    ...(security.readOnlyRoot && { readOnlyRoot: true as const }),
    // A pod on the host's network keeps the node's hostname, as the kubelet's does; only root can give another.
    ...(isRoot && !pod.hostNetwork && { hostname: podHostname(pod) }),
    labels: containerLabels(config, input.owner),
  };
  writeJson(join(dir, "config.json"), record);
  const stdio = { stdin: container.stdin === true, stdinOnce: container.stdinOnce === true, tty: container.tty === true };
  return { id, dir, logDir, record, limits, stdio, ...("problem" in mounts && { mountProblem: mounts.problem }) };
}

/**
 * The ServiceAccount admission's token mount, which the pod's author did not write, is bound only
 * where it can be (as root, its path on the host); elsewhere the process finds the token in
 * $MINIKUBELET_VOLUME_<NAME>, and the author's own binds, and the start's silence, do not hang on it.
 */
function bindable(mount: VolumeMount): boolean {
  return !isAdmittedTokenMount(mount) || (process.getuid?.() === 0 && existsSync(mount.mountPath));
}
