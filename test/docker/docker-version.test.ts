/**
 * The engine's version (the CRI's Version) on a real dockerd: what the Node reports as
 * `nodeInfo.containerRuntimeVersion`, `docker://27.3.1` as a kubelet on docker would.
 */
import { afterEach, expect, test } from "bun:test";
import { containerRuntimeVersion } from "../../src/node/node-object.ts";
import { describeDocker, DockerTestEnv } from "./helpers.ts";

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

describeDocker("docker runtime version", () => {
  test("is the engine's own version", async () => {
    const env = new DockerTestEnv();
    envs.push(env);
    const version = await env.runtime.version();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    expect(containerRuntimeVersion("docker", version)).toBe(`docker://${version}`);
  });
});
