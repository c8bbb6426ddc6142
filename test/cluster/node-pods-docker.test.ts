/**
 * The pods bound to a node on the docker runtime, against the real control plane: the compiled
 * agent joins as node `dock-1` with `--runtime docker` (the engine and images of
 * scripts/docker-env) and its kubelet port, and what node-pods.test.ts proves on the process runtime
 * is read back through the admin's kubectl: Running and ready with `docker://` ids, `kubectl logs`
 * and `exec` through the API server, a crash loop, a pod on the image's own command, graceful and
 * forced deletion, and adoption of the same containers after `kill -9`.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LABEL } from "../../src/runtime/labels.ts";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv, tryGetJson } from "../cluster-fixtures.ts";
import { BUSYBOX, describeDocker, docker } from "../docker/helpers.ts";
import { Agent, ensureBinary, freePort, waitFor, Workspace } from "../e2e/helpers.ts";

const NODE = "dock-1";
/** A namespace of this run's own: the last run's may still be going away. */
const NS = `node-docker-${Date.now().toString(36)}`;

/** Running containers of one pod (its sandbox too), as the engine has them. */
async function engineContainers(pod: string): Promise<{ id: string; name: string }[]> {
  const found = await docker.listContainers({ filters: { label: [`${LABEL.podNamespace}=${NS}`, `${LABEL.podName}=${pod}`] } });
  return found.map((c) => ({ id: c.Id, name: c.Labels[LABEL.containerName] ?? "" }));
}

describeDocker("node mode on the docker runtime", () => {
  describeCluster("node mode: the pods bound to the node, docker runtime", (env) => {
    let ws: Workspace;
    let agent: Agent;
    let args: string[];

    const startAgent = () => (agent = new Agent(ws, args, { node: NODE }));
    const pod = (name: string) => tryGetJson(env, "pod", name, "-n", NS);
    const create = (name: string, container: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const file = join(ws.path, `${name}.json`);
      const spec = { nodeName: NODE, automountServiceAccountToken: false, terminationGracePeriodSeconds: 5, containers: [{ name, image: BUSYBOX, imagePullPolicy: "Never", ...container }], ...extra };
      writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: NS }, spec }));
      kubectl(env, "create", "-f", file);
    };
    const running = (name: string) => waitFor(`${name} Running and ready`, () => {
      const object = pod(name);
      return object?.status?.phase === "Running" && object.status.containerStatuses?.[0]?.ready === true ? object : undefined;
    }, 30_000, () => agent.stdout + agent.stderr);

    beforeAll(async () => {
      ensureBinary();
      ws = new Workspace();
      const credentials = nodeCredentials(env, NODE);
      args = ["--runtime", "docker", "--kubeconfig", credentials.kubeconfig, "--kubelet-listen", `127.0.0.1:${await freePort()}`, "--tls-cert-file", credentials.cert, "--tls-private-key-file", credentials.key];
      kubectl(env, "create", "namespace", NS);
      startAgent();
    }, 30_000);

    afterAll(async () => {
      await agent?.terminate(10_000, 2_000);
      Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "delete", "pods", "--all", "-n", NS, "--force", "--grace-period=0"], { stderr: "pipe" });
      Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "delete", "namespace", NS, "--wait=false"]);
      Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "delete", "node", NODE, "--wait=false"]);
      // Pods outlive their agent by design: the engine's containers of this namespace go with the test.
      const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NS}`] } });
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      ws?.cleanup();
    });

    test("a pod bound to the node runs in the engine; the API server shows it Running and ready with docker:// ids and the kubelet's events", async () => {
      create("web", { command: ["sh", "-c", "echo started; i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.2; done"] });
      const object = await running("web");
      const status = object.status.containerStatuses[0];
      const inEngine = (await engineContainers("web")).find((c) => c.name === "web");
      expect(status.containerID).toBe(`docker://${inEngine!.id}`);
      expect(status.imageID).toBeString();
      expect(status.restartCount).toBe(0);
      expect(getJson(env, "node", NODE).status.nodeInfo.containerRuntimeVersion).toStartWith("docker://");
      const started = await waitFor("the Started event in the cluster", () =>
        getJson(env, "events", "-n", NS, "--field-selector", `involvedObject.uid=${object.metadata.uid}`).items.find((event: { reason: string }) => event.reason === "Started"));
      expect(started.source).toEqual({ component: "kubelet", host: NODE });
    }, 60_000);

    test("kubectl logs and exec reach the container through the API server", async () => {
      await waitFor("two ticks logged", () => /tick 2/.test(kubectl(env, "logs", "web", "-n", NS)), 10_000);
      expect(kubectl(env, "logs", "web", "-n", NS).split("\n").slice(0, 2)).toEqual(["started", "tick 1"]);
      const exec = spawnSync(join(env.bin, "kubectl"), ["--kubeconfig", env.admin, "exec", "web", "-n", NS, "--", "sh", "-c", "echo in $(hostname); echo oops >&2; exit 3"], { encoding: "utf8" });
      expect({ stdout: exec.stdout, stderr: exec.stderr.split("\n")[0], status: exec.status }).toEqual({ stdout: "in web\n", stderr: "oops", status: 3 });
      const stdin = spawnSync(join(env.bin, "kubectl"), ["--kubeconfig", env.admin, "exec", "-i", "web", "-n", NS, "--", "tr", "a-z", "A-Z"], { encoding: "utf8", input: "hello stdin\n" });
      expect(stdin.stdout).toBe("HELLO STDIN\n");
    }, 30_000);

    test("a pod without a command runs the image's own (the engine's rule, not a refusal) and succeeds", async () => {
      create("imagecmd", {}, { restartPolicy: "Never" });
      const done = await waitFor("imagecmd Succeeded", () => (pod("imagecmd")?.status?.phase === "Succeeded" ? pod("imagecmd") : undefined), 30_000, () => JSON.stringify(pod("imagecmd")?.status));
      expect(done.status.containerStatuses[0].state.terminated.exitCode).toBe(0);
    }, 45_000);

    test("a crashing container: its exits and its restarts in the API server", async () => {
      create("crash", { command: ["sh", "-c", "exit 3"] });
      const crashing = await waitFor("crash's exit with a restart", () => {
        const status = pod("crash")?.status?.containerStatuses?.[0];
        if (!status || status.restartCount < 1) return undefined;
        // The pass that meets an exit shows it (terminated); a later pass of the same back-off shows
        // CrashLoopBackOff with the exit as lastState, and the status manager may send only that one.
        const shown = status.state?.terminated ?? (status.state?.waiting?.reason === "CrashLoopBackOff" ? status.lastState?.terminated : undefined);
        return shown?.exitCode === 3 ? status : undefined;
      }, 30_000);
      expect(crashing.lastState.terminated.exitCode).toBe(3);
    }, 45_000);

    test("kubectl delete --grace-period=3: the container meets SIGTERM, and the final delete removes the pod", async () => {
      create("going", { command: ["sh", "-c", "trap 'sleep 1; exit 0' TERM; while true; do sleep 0.1; done"] });
      await running("going");
      const started = Date.now();
      kubectl(env, "delete", "pod", "going", "-n", NS, "--grace-period=3", "--wait=false");
      await waitFor("going gone from the API server", () => pod("going") === undefined, 20_000, () => JSON.stringify(pod("going")?.status));
      const tookMs = Date.now() - started;
      expect(tookMs).toBeGreaterThan(900);
      expect(tookMs).toBeLessThan(8000);
      expect(await engineContainers("going")).toEqual([]);
    }, 45_000);

    test("kubectl delete --force --grace-period=0: the agent stops the container without waiting out the pod's grace", async () => {
      create("forced", { command: ["sh", "-c", "trap '' TERM; while true; do sleep 0.1; done"] }, { terminationGracePeriodSeconds: 60 });
      await running("forced");
      const started = Date.now();
      kubectl(env, "delete", "pod", "forced", "-n", NS, "--force", "--grace-period=0");
      await waitFor("forced's containers stopped", async () => (await engineContainers("forced")).length === 0, 20_000, () => agent.stdout);
      expect(Date.now() - started).toBeLessThan(12_000);
    }, 45_000);

    test("kubectl patch --subresource resize: the engine's container gets the new cpu and memory in place; with RestartContainer for memory, a new container", async () => {
      const resources = { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } };
      const resizePolicy = [{ resourceName: "memory", restartPolicy: "RestartContainer" }];
      create("grow", { command: ["sleep", "600"], resources });
      create("bounce", { command: ["sleep", "600"], resources, resizePolicy });
      const [grow, bounce] = [await running("grow"), await running("bounce")];
      // A strategic merge patch (kubectl's default): a JSON merge patch would replace the container list and drop its resizePolicy, which the API server refuses.
      const resize = (name: string, value: unknown) => kubectl(env, "patch", "pod", name, "-n", NS, "--subresource", "resize", "-p", JSON.stringify({ spec: { containers: [{ name, resources: value }] } }));
      const resized = (name: string, memory: string) => waitFor(`${name} resized to ${memory}`, () => {
        const object = pod(name);
        const status = object?.status?.containerStatuses?.[0];
        const resizing = object?.status?.conditions?.some((c: { type: string }) => c.type.startsWith("PodResize"));
        return status?.state?.running && status.resources?.limits?.memory === memory && !resizing ? status : undefined;
      }, 30_000, () => agent.stdout + agent.stderr);
      const bigger = { requests: { cpu: "150m", memory: "32Mi" }, limits: { cpu: "300m", memory: "96Mi" } };
      resize("grow", bigger);
      resize("bounce", bigger);
      const grown = await resized("grow", "96Mi");
      expect([grown.containerID, grown.restartCount, grown.resources]).toEqual([grow.status.containerStatuses[0].containerID, 0, bigger]);
      const hostConfig = (await docker.getContainer(grown.containerID.replace("docker://", "")).inspect()).HostConfig;
      expect([hostConfig.Memory, hostConfig.CpuQuota, hostConfig.CpuShares]).toEqual([96 * 1024 * 1024, 30_000, 153]);
      const bounced = await resized("bounce", "96Mi");
      expect(bounced.containerID).not.toBe(bounce.status.containerStatuses[0].containerID);
      expect(bounced.restartCount).toBe(1);
      expect((await docker.getContainer(bounced.containerID.replace("docker://", "")).inspect()).HostConfig.Memory).toBe(96 * 1024 * 1024);
    }, 90_000);

    test("kill -9 and a new agent: the same docker containers, restart counts unchanged in the API server", async () => {
      const before = pod("web")!.status.containerStatuses[0];
      await agent.kill9();
      startAgent();
      await agent.waitForOutput("Adopted running container web", 20_000);
      const after = pod("web")!.status.containerStatuses[0];
      expect(after.containerID).toBe(before.containerID);
      expect(after.restartCount).toBe(before.restartCount);
      expect(`docker://${(await engineContainers("web")).find((c) => c.name === "web")!.id}`).toBe(before.containerID);
    }, 45_000);
  });
});

