/**
 * containerUsage on a real engine: the one-shot stats give a CPU counter that grows, a working set
 * within the memory limit, the writable layer and the log file; an exited or unknown container
 * has no usage; the image filesystem is the engine root's.
 */
import { afterEach, expect, test } from "bun:test";
import { bbContainer, describeDocker, DockerTestEnv, testPod, waitExit } from "./helpers.ts";
import { waitFor } from "../e2e/helpers.ts";

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

describeDocker("docker container usage", () => {
  test("a writing busy container's cpu, memory, writable layer and log; none once it has exited", async () => {
    const env = new DockerTestEnv();
    envs.push(env);
    const busy = bbContainer("busy", "head -c 300000 /dev/zero > /layer; echo hello; while :; do :; done", { resources: { limits: { memory: "64Mi" }, requests: { memory: "64Mi" } } });
    const short = bbContainer("short", "exit 0");
    const pod = testPod("usage", [busy, short]);
    const sandbox = await env.sandbox(pod);
    const id = await env.start(pod, sandbox, busy);
    const first = await waitFor("the layer written", async () => {
      const usage = await env.runtime.containerUsage(id);
      return usage && usage.rootfsUsedBytes! >= 300_000 && usage.logsUsedBytes! > 0 ? usage : undefined;
    }, 20_000);
    expect(first.memory!.limitBytes).toBe(64 * 1024 * 1024);
    expect(first.memory!.workingSetBytes).toBeLessThanOrEqual(first.memory!.usageBytes);
    expect(first.memory!.workingSetBytes).toBeGreaterThan(0);
    const second = await waitFor("more CPU time", async () => {
      const usage = await env.runtime.containerUsage(id);
      return usage && usage.cpuUsageCoreNanoSeconds! > first.cpuUsageCoreNanoSeconds! + 100_000_000 ? usage : undefined;
    }, 20_000);
    expect(second.at).toBeGreaterThan(first.at);

    const shortId = await env.start(pod, sandbox, short);
    expect(await waitExit(shortId)).toBe(0);
    expect(await env.runtime.containerUsage(shortId)).toBeUndefined();
    expect(await env.runtime.containerUsage("0123456789ab")).toBeUndefined();
    const images = await env.runtime.imageFsUsage();
    expect(images.usedBytes).toBeGreaterThan(0);
    expect(images.path).toMatch(/^\//);
  }, 60_000);
});
