/**
 * `kubectl patch --subresource resize` against the compiled agent's own API (process runtime): the
 * running container keeps its process and gets the new limits in its cgroup, `get -o yaml` shows
 * the new resources in spec and status; a file pod is the API server's refusal for a static pod.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { hostMemoryLimitOf } from "../cgroup-fixtures.ts";
import { join } from "node:path";
import { processContainers, waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, useAgentWithApi } from "./harness.ts";

const live = useAgentWithApi((ws) => ws.write("static.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: static}\nspec:\n  containers:\n    - {name: app, image: busybox, command: [sleep, '600']}\n"));

const kubectl = (binary: string, ...args: string[]) => live.session.run(binary, args, { timeoutMs: 60_000 });

// --subresource resize is kubectl's since 1.32.
describeWithKubectl("kubectl 1.33 patch --subresource resize", KUBECTL.versions["1.33"], (binary) => {
  test("the running container gets the new memory limit in its cgroup, keeps its process, and spec and status show it", async () => {
    const file = join(live.session.dir, "grow.yaml");
    writeFileSync(file, "apiVersion: v1\nkind: Pod\nmetadata: {name: grow}\nspec:\n  containers:\n    - name: web\n      image: busybox\n      command: [sleep, '600']\n      resources: {requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}\n");
    expect((await kubectl(binary, "apply", "-f", file)).status).toBe(0);
    await live.agent.waitForOutput("Started default/grow web", 15_000);
    const pid = processContainers(live.ws).find((c) => c.podName === "grow" && !c.exited)!.pid!;
    const patched = await kubectl(binary, "patch", "pod", "grow", "--subresource", "resize", "-p", '{"spec":{"containers":[{"name":"web","resources":{"limits":{"memory":"96Mi"}}}]}}');
    expect(patched).toMatchObject({ status: 0, stdout: "pod/grow patched\n" });
    const status = await waitFor("the new limit in the status", async () => {
      const { stdout } = await kubectl(binary, "get", "pod", "grow", "-o", "jsonpath={.spec.containers[0].resources.limits.memory} {.status.containerStatuses[0].resources.limits.memory} {.status.containerStatuses[0].restartCount}");
      return stdout === "96Mi 96Mi 0" ? stdout : undefined;
    }, 15_000);
    expect(status).toBe("96Mi 96Mi 0");
    expect(processContainers(live.ws).find((c) => c.podName === "grow" && !c.exited)?.pid).toBe(pid);
    if (process.getuid?.() === 0) expect(hostMemoryLimitOf(pid)).toBe(String(96 * 1024 * 1024));
  }, 60_000);

  test("resizing a file pod is the API server's refusal for a static pod", async () => {
    const refused = await kubectl(binary, "patch", "pod", "static-n1", "--subresource", "resize", "-p", '{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":"96Mi"}}}]}}');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('The Pod "static-n1" is invalid: []: Forbidden: static pods cannot be resized');
  }, 60_000);
});
