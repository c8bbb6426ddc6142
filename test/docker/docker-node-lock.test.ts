/**
 * Issue 11: two agents on one docker engine with the same --node (different databases) shared the
 * node's label namespace and removed each other's containers. The node is locked on the engine: a
 * second agent is refused naming the holder's pid, and a holder that died (kill -9) is taken over.
 */
import { afterEach, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { acquireNodeLock, nodeLockName, NodeLockError } from "../../src/runtime/docker/docker-node-lock.ts";
import { describeDocker, docker, PAUSE } from "./helpers.ts";

const children: ChildProcess[] = [];
const nodes: string[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const node of nodes.splice(0)) await docker.getContainer(nodeLockName(node)).remove({ force: true }).catch(() => undefined);
});

function liveProcess(): number {
  const child = spawn("sleep", ["30"], { stdio: "ignore" });
  children.push(child);
  return child.pid!;
}

describeDocker("the docker node lock", () => {
  test("a second agent on the same node is refused with the holder's pid; other nodes are free", async () => {
    const node = `lock-${randomBytes(3).toString("hex")}`;
    nodes.push(node, `${node}-b`);
    const holder = liveProcess();
    const first = await acquireNodeLock(docker, { node, database: "/srv/a.db", image: PAUSE, pid: holder });
    const refused = await acquireNodeLock(docker, { node, database: "/srv/b.db", image: PAUSE }).catch((error) => error);
    expect(refused).toBeInstanceOf(NodeLockError);
    expect(refused.message).toBe(
      `--node ${node} is in use on this docker engine by another minikubelet agent (pid ${holder}, database /srv/a.db); stop it first or use another --node (lock: container minikubelet-agent-${node})`,
    );
    const other = await acquireNodeLock(docker, { node: `${node}-b`, database: "/srv/b.db", image: PAUSE });
    await other.release();
    await first.release();
    const after = await acquireNodeLock(docker, { node, database: "/srv/b.db", image: PAUSE });
    await after.release();
  });

  test("the lock of an agent that died is taken over", async () => {
    const node = `lock-${randomBytes(3).toString("hex")}`;
    nodes.push(node);
    const holder = liveProcess();
    await acquireNodeLock(docker, { node, database: "/srv/a.db", image: PAUSE, pid: holder });
    const child = children.pop()!;
    child.kill("SIGKILL");
    await new Promise((done) => child.once("exit", done));
    const lock = await acquireNodeLock(docker, { node, database: "/srv/b.db", image: PAUSE });
    const info = await docker.getContainer(nodeLockName(node)).inspect();
    expect(info.Config.Labels["io.minikubelet.agent-lock.pid"]).toBe(String(process.pid));
    await lock.release();
    await expect(docker.getContainer(nodeLockName(node)).inspect()).rejects.toThrow();
  });
});
