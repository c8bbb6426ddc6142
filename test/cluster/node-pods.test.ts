/**
 * The pods bound to a node, against the real control plane: the compiled agent joins as node
 * `pods-1` on the process runtime and runs what the API server binds to it; what it reports (status,
 * restarts, events, deletions, mirror pods) is read back through the admin's kubectl, as a user
 * sees it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { hostMemoryLimitOf } from "../cgroup-fixtures.ts";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv, removeNodeAndPods, tryGetJson } from "../cluster-fixtures.ts";
import { Agent, ensureBinary, isRunning, killRecordedContainers, processContainers, processesMentioning, waitFor, Workspace } from "../e2e/helpers.ts";

const NODE = "pods-1";
/** A namespace of this run's own: the last run's may still be going away (namespace deletion takes seconds). */
const NS = `node-pods-${Date.now().toString(36)}`;

describeCluster("node mode: the pods bound to the node", (env) => {
  let ws: Workspace;
  let agent: Agent;
  let kubeconfig: string;

  const startAgent = () => {
    agent = new Agent(ws, ["--kubeconfig", kubeconfig], { node: NODE });
    return agent;
  };
  const pod = (name: string) => tryGetJson(env, "pod", name, "-n", NS);
  const create = (name: string, command: string[], extra: Record<string, unknown> = {}) => {
    const file = join(ws.path, `${name}.json`);
    writeFileSync(file, JSON.stringify(boundPod(name, command, extra)));
    kubectl(env, "create", "-f", file);
  };

  beforeAll(() => {
    ensureBinary();
    ws = new Workspace();
    kubeconfig = nodeCredentials(env, NODE).kubeconfig;
    kubectl(env, "create", "namespace", NS);
    // The Node, as its own credentials may create it (the registration part makes it in full).
    const nodeFile = join(ws.path, "node.json");
    writeFileSync(nodeFile, JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name: NODE, labels: { "kubernetes.io/hostname": NODE } } }));
    const created = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", kubeconfig, "create", "-f", nodeFile], { stderr: "pipe" });
    if (created.exitCode !== 0 && !created.stderr.toString().includes("AlreadyExists")) throw new Error(created.stderr.toString());
    // Ready with room for pods, so the scheduler may bind here (set by the admin: the node's own
    // status writes belong to the registration part, which may not have run yet).
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const resources = { cpu: "2", memory: "4Gi", pods: "110" };
    const ready = { type: "Ready", status: "True", reason: "KubeletReady", message: "test", lastHeartbeatTime: now, lastTransitionTime: now };
    kubectl(env, "patch", "node", NODE, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { capacity: resources, allocatable: resources, conditions: [ready] } }));
    startAgent();
  });

  afterAll(async () => {
    await agent?.terminate();
    removeNodeAndPods(env, NODE, NS, ws, (root) => {
      killRecordedContainers(root);
      for (const left of processesMentioning(root)) if (isRunning(left.pid)) process.kill(left.pid, "SIGKILL");
    });
  });

  test("a pod bound to the node runs, and the API server shows it Running and ready, with the kubelet's events", async () => {
    create("web", ["sleep", "600"]);
    const running = await waitFor("web Running and ready in the API server", () => {
      const object = pod("web");
      const status = object?.status?.containerStatuses?.[0];
      return object?.status?.phase === "Running" && status?.ready === true ? object : undefined;
    }, 20_000, () => agent.stdout + agent.stderr);
    expect(running.status.containerStatuses[0].restartCount).toBe(0);
    expect(running.status.containerStatuses[0].containerID).toStartWith("process://");
    expect(running.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual(expect.arrayContaining(["Ready=True", "ContainersReady=True", "Initialized=True", "PodScheduled=True"]));
    expect(running.status.startTime).toBeString();
    expect(running.status.observedGeneration).toBe(running.metadata.generation);
    expect(running.status.conditions.find((c: { type: string }) => c.type === "Ready").observedGeneration).toBe(running.metadata.generation);
    const started = await waitFor("the Started event in the cluster", () =>
      getJson(env, "events", "-n", NS, "--field-selector", `involvedObject.uid=${running.metadata.uid}`).items.find((event: { reason: string }) => event.reason === "Started"));
    expect(started.source).toEqual({ component: "kubelet", host: NODE });
    expect(started.involvedObject.fieldPath).toBe("spec.containers{web}");
  });

  test("a pod the scheduler binds here runs; describe shows the scheduler's Scheduled beside the kubelet's events", async () => {
    create("sched", ["sleep", "600"], { nodeName: undefined, nodeSelector: { "kubernetes.io/hostname": NODE } });
    // The node lifecycle controller lifts its not-ready taint a few seconds after the Node turned Ready.
    await waitFor("sched Running here", () => pod("sched")?.status?.phase === "Running" && pod("sched")!.spec.nodeName === NODE, 30_000);
    await waitFor("describe shows Scheduled and Started", () => {
      const described = kubectl(env, "describe", "pod", "sched", "-n", NS);
      return /Scheduled\s.*default-scheduler\s.*assigned/.test(described) && /Started\s.*kubelet\s.*Started container sched/.test(described);
    }, 10_000);
  });

  test("a crashing container: its exit, shown while its back-off runs, and its restarts in the API server", async () => {
    create("crash", ["sh", "-c", "exit 3"]);
    const crashing = await waitFor("crash's second exit shown, with a restart", () => {
      const status = pod("crash")?.status?.containerStatuses?.[0];
      return status?.state?.terminated?.exitCode === 3 && status.restartCount >= 1 ? status : undefined;
    }, 20_000);
    expect(crashing.lastState.terminated.exitCode).toBe(3);
    expect(pod("crash")!.status.phase).toBe("Running");
  });

  test("a pod the process runtime cannot run (no command) fails with the node's rejection, not silence", async () => {
    kubectl(env, "run", "nocmd", "-n", NS, "--image=busybox", "--restart=Never", `--overrides=${JSON.stringify({ spec: { nodeName: NODE, automountServiceAccountToken: false } })}`);
    const failed = await waitFor("nocmd Failed", () => (pod("nocmd")?.status?.phase === "Failed" ? pod("nocmd") : undefined), 20_000);
    expect(failed.status.reason).toBe("UnsupportedPodSpec");
    expect(failed.status.message).toStartWith("Pod was rejected: ");
    expect(failed.status.message).toContain("command");
    // Deleted, it never ran: the final delete comes at once.
    kubectl(env, "delete", "pod", "nocmd", "-n", NS, "--wait=false");
    await waitFor("nocmd gone", () => pod("nocmd") === undefined, 10_000);
  });

  test("kubectl delete --grace-period=3: the agent stops the pod and the final delete removes it", async () => {
    create("going", ["sh", "-c", "trap 'sleep 1; exit 0' TERM; while true; do sleep 0.1; done"]);
    await waitFor("going Running", () => pod("going")?.status?.phase === "Running", 20_000);
    const started = Date.now();
    kubectl(env, "delete", "pod", "going", "-n", NS, "--grace-period=3", "--wait=false");
    await waitFor("going gone from the API server", () => pod("going") === undefined, 15_000, () => JSON.stringify(pod("going")?.status));
    const tookMs = Date.now() - started;
    // Its TERM trap takes a second; it is not killed at the 3 s grace, nor left Terminating.
    expect(tookMs).toBeGreaterThan(900);
    expect(tookMs).toBeLessThan(6000);
    expect(processContainers(ws).filter((c) => c.name === "going" && !c.exited)).toEqual([]);
  });

  test("kubectl delete --force --grace-period=0: gone from the API server at once, and the agent kills it without waiting out the pod's grace", async () => {
    create("forced", ["sh", "-c", "trap '' TERM; while true; do sleep 0.1; done"], { terminationGracePeriodSeconds: 60 });
    await waitFor("forced Running", () => pod("forced")?.status?.phase === "Running", 20_000);
    const pid = processContainers(ws).find((c) => c.name === "forced" && !c.exited)!.pid!;
    const started = Date.now();
    kubectl(env, "delete", "pod", "forced", "-n", NS, "--force", "--grace-period=0");
    await waitFor("forced's process gone", () => !isRunning(pid), 15_000, () => agent.stdout);
    // It ignores SIGTERM: only the kill at the end of the (2 s floor) grace stops it, long before 60 s.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("a static pod's mirror pod: made with the config hash and the Node as owner, made again when deleted, removed with the file", async () => {
    ws.write("static.yaml", `apiVersion: v1\nkind: Pod\nmetadata: {name: stat, namespace: ${NS}}\nspec:\n  containers:\n  - name: s\n    image: busybox\n    command: ["sleep", "600"]\n`);
    const name = `stat-${NODE}`;
    const mirror = await waitFor("the mirror pod Running", () => (pod(name)?.status?.phase === "Running" ? pod(name) : undefined), 20_000, () => agent.stdout);
    const node = getJson(env, "node", NODE);
    expect(mirror.metadata.annotations["kubernetes.io/config.mirror"]).toBe(mirror.metadata.annotations["kubernetes.io/config.hash"]);
    expect(mirror.metadata.annotations["kubernetes.io/config.source"]).toBe("file");
    expect(mirror.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: NODE, uid: node.metadata.uid, controller: true }]);
    kubectl(env, "delete", "pod", name, "-n", NS, "--wait=false");
    const again = await waitFor("a new mirror pod", () => {
      const object = pod(name);
      return object && object.metadata.uid !== mirror.metadata.uid && !object.metadata.deletionTimestamp ? object : undefined;
    }, 15_000);
    // The static pod itself never stopped: the same container.
    await waitFor("the new mirror's status", () => pod(name)?.status?.containerStatuses?.[0]?.containerID === mirror.status.containerStatuses[0].containerID);
    expect(again.metadata.annotations["kubernetes.io/config.mirror"]).toBe(mirror.metadata.annotations["kubernetes.io/config.mirror"]);
    ws.remove("static.yaml");
    await waitFor("the mirror pod removed with its file", () => pod(name) === undefined, 15_000);
  });

  test("kubectl patch --subresource resize: the running container gets its new limits in its cgroup, keeps its id and restart count, and the status and events say so", async () => {
    const resources = { requests: { cpu: "100m", memory: "32Mi" }, limits: { cpu: "200m", memory: "64Mi" } };
    create("grow", ["sleep", "600"], { containers: [{ name: "grow", image: "busybox", command: ["sleep", "600"], resources }] });
    const before = await waitFor("grow Running", () => {
      const status = pod("grow")?.status?.containerStatuses?.[0];
      return status?.state?.running ? status : undefined;
    }, 20_000, () => agent.stdout + agent.stderr);
    expect([before.resources, before.allocatedResources]).toEqual([resources, resources.requests]);
    const bigger = { requests: { cpu: "150m", memory: "32Mi" }, limits: { cpu: "300m", memory: "96Mi" } };
    kubectl(env, "patch", "pod", "grow", "-n", NS, "--subresource", "resize", "--type", "merge", "-p", JSON.stringify({ spec: { containers: [{ name: "grow", resources: bigger }] } }));
    const after = await waitFor("grow resized in the API server", () => {
      const object = pod("grow");
      const status = object?.status?.containerStatuses?.[0];
      const resizing = object?.status?.conditions?.some((c: { type: string }) => c.type.startsWith("PodResize"));
      return status?.resources?.limits?.memory === "96Mi" && !resizing ? object : undefined;
    }, 20_000, () => agent.stdout + agent.stderr);
    const status = after.status.containerStatuses[0];
    expect([status.containerID, status.restartCount, status.allocatedResources]).toEqual([before.containerID, 0, bigger.requests]);
    expect(status.resources).toEqual(bigger);
    expect(after.status.observedGeneration).toBe(after.metadata.generation);
    const pid = processContainers(ws).find((c) => c.name === "grow" && !c.exited)?.pid;
    expect(hostMemoryLimitOf(pid!)).toBe(String(96 * 1024 * 1024));
    const reasons = await waitFor("ResizeStarted and ResizeCompleted in the cluster", () => {
      const events = getJson(env, "events", "-n", NS, "--field-selector", `involvedObject.uid=${after.metadata.uid}`).items.map((event: { reason: string }) => event.reason);
      return events.includes("ResizeCompleted") ? events : undefined;
    });
    expect(reasons).toContain("ResizeStarted");
  });

  test("kill -9 and a new agent: the same containers, restart counts unchanged in the API server, a pod deleted meanwhile stopped and gone, and status patches resume", async () => {
    await waitFor("web Running", () => pod("web")?.status?.phase === "Running");
    const before = pod("web")!.status.containerStatuses[0];
    const pid = processContainers(ws).find((c) => c.name === "web" && !c.exited)!.pid!;
    const schedPid = processContainers(ws).find((c) => c.name === "sched" && !c.exited)!.pid!;
    await agent.kill9();
    // Deleted while no agent runs: the next one adopts it, stops it and finishes the deletion.
    kubectl(env, "delete", "pod", "sched", "-n", NS, "--wait=false");
    startAgent();
    await agent.waitForOutput("Adopted running container web", 15_000);
    expect(processContainers(ws).find((c) => c.name === "web" && !c.exited)?.pid).toBe(pid);
    const after = pod("web")!.status.containerStatuses[0];
    expect(after.containerID).toBe(before.containerID);
    expect(after.restartCount).toBe(before.restartCount);
    await waitFor("sched, deleted while the agent was down, gone", () => pod("sched") === undefined, 15_000, () => agent.stdout);
    expect(isRunning(schedPid)).toBe(false);
    // A status the new agent must report: the container dies and is restarted.
    process.kill(pid, "SIGKILL");
    await waitFor("web's restart in the API server", () => pod("web")?.status?.containerStatuses?.[0]?.restartCount === before.restartCount + 1, 20_000, () => agent.stdout);
  });
});

/** A pod bound to the node by spec.nodeName (no scheduler needed), without the service account token volume this agent does not mount yet. */
function boundPod(name: string, command: string[], extra: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: { nodeName: NODE, automountServiceAccountToken: false, terminationGracePeriodSeconds: 5, containers: [{ name, image: "busybox", command }], ...extra },
  };
}

