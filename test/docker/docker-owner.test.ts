/**
 * Issue 11: an agent may not list, reuse or remove a container it cannot prove it created. On a
 * shared engine, a runtime with its database's identity sees only what carries that identity: a
 * second database's runtime (same node labels, same pod uid) neither lists nor removes the first's
 * containers and sandbox, and does not join its sandbox.
 */
import { afterEach, expect, test } from "bun:test";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { PAUSE, bbContainer, describeDocker, docker, DockerTestEnv, testPod } from "./helpers.ts";

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

describeDocker("the docker runtime's owner", () => {
  test("another database's runtime cannot see, reuse or remove our containers and sandbox", async () => {
    const ours = new DockerTestEnv({ owner: "a".repeat(32) });
    envs.push(ours);
    const theirs = new DockerRuntime({ pauseImage: PAUSE, volumeRoot: ours.volumeRoot, owner: "b".repeat(32) });
    try {
      const pod = testPod("owned", [bbContainer("main", "exec sleep 60")]);
      const sandbox = await ours.sandbox(pod);
      const id = await ours.start(pod, sandbox, pod.containers[0]!);
      expect((await docker.getContainer(id).inspect()).Config.Labels[LABEL.database]).toBe("a".repeat(32));

      expect((await theirs.listContainers()).map((c) => c.id)).not.toContain(id);
      expect((await theirs.listPodSandboxes()).map((s) => s.id)).not.toContain(sandbox.id);
      await expect(theirs.removeContainer(id)).rejects.toThrow("not created by this agent's database");
      await expect(theirs.removePodSandbox(sandbox.id)).rejects.toThrow("not created by this agent's database");
      // Same pod uid: the other database gets a sandbox of its own, never ours.
      const theirSandbox = await theirs.runPodSandbox(pod).catch((error: Error) => error);
      expect(theirSandbox instanceof Error ? theirSandbox.message : theirSandbox.id).not.toBe(sandbox.id);

      expect((await ours.runtime.containerStatus(id)).state).toBe("running");
      expect((await ours.runtime.listContainers()).map((c) => c.id)).toContain(id);
    } finally {
      await theirs.close();
    }
  });
});
