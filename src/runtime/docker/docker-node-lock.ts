/**
 * One agent per --node on a docker engine, whatever their databases: the node's containers are
 * labelled `io.minikubelet.node=NODE`, a namespace two agents must not share. The lock lives in the
 * engine itself, so agents with different databases, users or /tmp see the same one: a created
 * (never started) container named after the node, whose labels name the holder's pid, its kernel
 * start time, its host and its database. Container names are unique on an engine, so a create is an
 * atomic test-and-set; a holder that is gone (kill -9) is replaced by removing that very container
 * (by id, so a lock a third agent just took is never removed by mistake) and creating it again.
 */
import { hostname } from "node:os";
import type Dockerode from "dockerode";
import { dockerMessage, isConflict, isNotFound } from "./docker-errors.ts";
import { isLiveProcess, parseStartTicks, recordedStartTicks } from "../../host/process-liveness.ts";

const HOLDER = {
  node: "io.minikubelet.agent-lock.node",
  pid: "io.minikubelet.agent-lock.pid",
  startTicks: "io.minikubelet.agent-lock.start-ticks",
  host: "io.minikubelet.agent-lock.host",
  database: "io.minikubelet.agent-lock.database",
} as const;

export interface NodeLockOptions {
  node: string;
  /** The holder's database, named in the refusal. */
  database: string;
  /** Any image the engine has (the pause image): the lock container is created, never started. */
  image: string;
  pid?: number;
}

export interface NodeLock {
  /** Removes the lock container if it is still ours. Idempotent. */
  release(): Promise<void>;
}

/** Another live agent holds the node on this engine. */
export class NodeLockError extends Error {
  override readonly name = "NodeLockError";
  constructor(
    readonly node: string,
    readonly pid: number,
    readonly host: string,
    readonly database: string,
    readonly lockName: string,
  ) {
    const where = host === hostname() ? "" : ` on host ${host}`;
    const label = node === "" ? "the unnamed node (no --node)" : `--node ${node}`;
    super(
      `${label} is in use on this docker engine by another minikubelet agent (pid ${pid}${where}, database ${database}); stop it first or use another --node (lock: container ${lockName})`,
    );
  }
}

/** The lock container's name for a node. */
export function nodeLockName(node: string): string {
  return node === "" ? "minikubelet-agent" : `minikubelet-agent-${node}`;
}

/** Takes the engine-wide lock of `node`, or throws NodeLockError naming the live holder's pid. */
export async function acquireNodeLock(docker: Dockerode, options: NodeLockOptions): Promise<NodeLock> {
  const pid = options.pid ?? process.pid;
  const name = nodeLockName(options.node);
  const labels = {
    [HOLDER.node]: options.node,
    [HOLDER.pid]: String(pid),
    [HOLDER.startTicks]: recordedStartTicks(pid),
    [HOLDER.host]: hostname(),
    [HOLDER.database]: options.database,
  };
  for (let tries = 0; ; tries++) {
    try {
      const created = await docker.createContainer({ name, Image: options.image, Labels: labels, Cmd: ["minikubelet-agent-lock"] });
      return lockHandle(docker, created.id);
    } catch (error) {
      if (!isConflict(error)) throw new Error(`taking the docker lock ${name}: ${dockerMessage(error)}`, { cause: error });
      if (tries >= 2) throw new Error(`taking the docker lock ${name}: still taken after removing a stale holder ${tries} times`, { cause: error });
    }
    let holder: Dockerode.ContainerInspectInfo;
    try {
      holder = await docker.getContainer(name).inspect();
    } catch (error) {
      if (isNotFound(error)) continue; // released between our create and this look
      throw error;
    }
    const held = holder.Config.Labels ?? {};
    const holderPid = Number(held[HOLDER.pid]);
    const holderHost = held[HOLDER.host] ?? "?";
    const gone =
      holderHost === hostname() &&
      Number.isInteger(holderPid) &&
      (holderPid === pid || !isLiveProcess(holderPid, parseStartTicks(held[HOLDER.startTicks])));
    // An agent on another host cannot be checked from here: only a user can say it is gone.
    if (!gone) throw new NodeLockError(options.node, holderPid, holderHost, held[HOLDER.database] ?? "?", name);
    await removeQuietly(docker, holder.Id);
  }
}

function lockHandle(docker: Dockerode, id: string): NodeLock {
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      await removeQuietly(docker, id);
    },
  };
}

async function removeQuietly(docker: Dockerode, id: string): Promise<void> {
  try {
    await docker.getContainer(id).remove({ force: true });
  } catch (error) {
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}
