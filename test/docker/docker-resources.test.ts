/**
 * Resources on docker: the kubelet's cgroup settings read back from the engine with inspect, and a
 * container over its memory limit killed by the kernel and reported OOMKilled from the engine's state.
 */
import { afterEach, expect, test } from "bun:test";
import { bbContainer, describeDocker, docker, DockerTestEnv, testPod, waitExit } from "./helpers.ts";

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

describeDocker("docker resources", () => {
  test("limits, shares and the node's pids limit are what the engine holds", async () => {
    const env = new DockerTestEnv({ nodeResources: { podMaxPids: 50 } });
    envs.push(env);
    const limited = bbContainer("limited", "sleep 30", { resources: { limits: { cpu: "500m", memory: "64Mi" }, requests: { cpu: "250m", memory: "32Mi" } } });
    const bestEffort = bbContainer("besteffort", "sleep 30");
    const pod = testPod("limits", [limited, bestEffort]);
    const sandbox = await env.sandbox(pod);
    const limitedInfo = await docker.getContainer(await env.start(pod, sandbox, limited)).inspect();
    expect(limitedInfo.HostConfig).toMatchObject({ Memory: 67108864, MemorySwap: 67108864, CpuShares: 256, CpuPeriod: 100000, CpuQuota: 50000, PidsLimit: 50 });
    const bestEffortInfo = await docker.getContainer(await env.start(pod, sandbox, bestEffort)).inspect();
    expect(bestEffortInfo.HostConfig).toMatchObject({ Memory: 0, CpuShares: 2, CpuQuota: 0, PidsLimit: 50 });
  }, 60_000);

  test("a container over its memory limit is OOMKilled by the kernel, and the runtime says so", async () => {
    const env = new DockerTestEnv();
    envs.push(env);
    // The shell holds the whole substitution in memory: about 50 MB against a 16 MiB limit, no swap.
    const hog = bbContainer("hog", `x=$(head -c 50000000 /dev/zero | tr '\\0' a); echo survived`, {
      resources: { limits: { memory: "16Mi" }, requests: { memory: "16Mi" } },
    });
    const pod = testPod("oom", [hog]);
    const sandbox = await env.sandbox(pod);
    const id = await env.start(pod, sandbox, hog);
    expect(await waitExit(id)).toBe(137);
    expect((await docker.getContainer(id).inspect()).State.OOMKilled).toBe(true);
    expect(await env.runtime.containerStatus(id)).toMatchObject({ state: "exited", exitCode: 137, reason: "OOMKilled" });
  }, 60_000);
});
