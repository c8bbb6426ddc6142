/**
 * Container log limits on docker: the engine's json-file driver gets --container-log-max-size and
 * --container-log-max-files at create (read back with inspect), and a flood stays under their
 * product on disk while `logs --tail` still shows the newest lines.
 */
import { afterEach, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { bbContainer, describeDocker, docker, DockerTestEnv, testPod, waitExit } from "./helpers.ts";

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

describeDocker("docker container log limits", () => {
  test("the engine rotates a flood by the agent's limits, and the tail is the newest lines", async () => {
    const env = new DockerTestEnv({ logPolicy: { maxBytes: 64 * 1024, maxFiles: 3 } });
    envs.push(env);
    const lines = 100_000;
    const pod = testPod("flood", [bbContainer("main", `seq 1 ${lines}`)]);
    const sandbox = await env.sandbox(pod);
    const id = await env.start(pod, sandbox, pod.containers[0]!);
    expect(await waitExit(id)).toBe(0);

    const inspect = await docker.getContainer(id).inspect();
    expect(inspect.HostConfig.LogConfig).toEqual({ Type: "json-file", Config: { "max-size": "65536", "max-file": "3" } });
    // The engine's files (json lines, several times the text): the current one and the rotated ones.
    const dir = dirname(inspect.LogPath);
    const files = readdirSync(dir).filter((name) => name.startsWith(`${id}-json.log`));
    expect(files.length).toBeGreaterThan(1);
    expect(files.length).toBeLessThanOrEqual(3);
    const total = files.reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
    expect(total).toBeLessThanOrEqual(3 * 64 * 1024);
    expect(await env.runtime.readLogs(id, { tail: 5 })).toBe(`${[4, 3, 2, 1, 0].map((back) => lines - back).join("\n")}\n`);
  }, 60_000);
});
