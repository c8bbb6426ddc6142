/**
 * The Node's lifecycle against the real control plane (Kubernetes v1.37.2), with the compiled
 * agent: it registers node life-1 Ready with the kubelet's labels, addresses, capacity and version,
 * renews its Lease; stopped (kill -9), kube-controller-manager's node-lifecycle controller marks it
 * Unknown after its grace (cluster-env sets 20s); started again, the same Node is Ready again. With
 * the API server cut off mid-run (a TCP relay between them, closed and reopened), the agent says so
 * once each way and its Lease catches up; away at start, the agent registers once it answers.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv } from "../cluster-fixtures.ts";
import { Agent, containerRows, e2ePodManifest, ensureBinary, killRecordedContainers, waitFor, Workspace } from "../e2e/helpers.ts";

const NODE = "life-1";

describeCluster("node lifecycle", (env: ClusterEnv) => {
  let ws: Workspace;
  let kubeconfig: string;
  const agents: Agent[] = [];
  const start = (config = kubeconfig) => {
    const agent = new Agent(ws, ["--kubeconfig", config, "--kubelet-listen", "127.0.0.1:0"], { node: NODE });
    agents.push(agent);
    return agent;
  };
  const node = () => getJson(env, "node", NODE);
  const ready = (object: Record<string, any>) => object.status?.conditions?.find((c: any) => c.type === "Ready");
  const tryNode = () => {
    try {
      return node();
    } catch {
      return undefined;
    }
  };

  beforeAll(() => {
    ensureBinary();
    ws = new Workspace();
    kubeconfig = nodeCredentials(env, NODE).kubeconfig;
    kubectl(env, "delete", "node", NODE, "--ignore-not-found", "--wait=false");
  });

  afterAll(async () => {
    for (const agent of agents) await agent.terminate();
    // The static pod of the last test outlives its agent, as pods do.
    killRecordedContainers(ws.path);
    kubectl(env, "delete", "node", NODE, "--ignore-not-found", "--wait=false");
    kubectl(env, "delete", "lease", "-n", "kube-node-lease", NODE, "--ignore-not-found", "--wait=false");
    ws.cleanup();
  });

  test("registers the Node Ready, as a kubelet of v1.37.2 would, and renews its Lease", async () => {
    const agent = start();
    const registered = await waitFor("node life-1 Ready", () => ready(tryNode() ?? {})?.status === "True" && node(), 15_000, () => agent.stderr);
    expect(registered.metadata.labels).toMatchObject({
      "kubernetes.io/hostname": NODE,
      "kubernetes.io/os": "linux",
      "kubernetes.io/arch": expect.any(String),
      "beta.kubernetes.io/os": "linux",
    });
    expect(registered.status.addresses).toEqual([
      { type: "InternalIP", address: "127.0.0.1" },
      { type: "Hostname", address: NODE },
    ]);
    expect(Object.keys(registered.status.capacity).sort()).toEqual(["cpu", "ephemeral-storage", "memory", "pods"]);
    expect(registered.status.nodeInfo).toMatchObject({ kubeletVersion: "v1.37.2", operatingSystem: "linux", containerRuntimeVersion: expect.stringMatching(/^process:\/\/minikubelet-/) });
    const port = await waitFor("the agent's kubelet port", () => Number(/kubelet\s+https:\/\/127\.0\.0\.1:(\d+)/.exec(agent.stderr)?.[1]), 5_000, () => agent.stderr);
    expect(registered.status.daemonEndpoints.kubeletEndpoint.Port).toBe(port);
    expect(ready(registered)).toMatchObject({ reason: "KubeletReady", message: "kubelet is posting ready status" });
    expect(kubectl(env, "get", "node", NODE, "--no-headers")).toMatch(/^life-1\s+Ready\s+<none>\s+\S+\s+v1\.37\.2\s*$/);
    // The Node's events, as `kubectl describe node` lists them after a kubelet's start.
    const nodeEvents = () => getJson(env, "events", "-n", "default", "--field-selector", `involvedObject.kind=Node,involvedObject.uid=${registered.metadata.uid},source=kubelet`).items as any[];
    await waitFor("the Node's start events", () => nodeEvents().length >= 4, 10_000, () => agent.stderr);
    // Listed by name, and names made the same millisecond order at random: compared as a set.
    expect(nodeEvents().map((event) => [event.reason, event.message, event.source.component, event.involvedObject.uid]).sort()).toEqual([
      ["Starting", "Starting kubelet.", "kubelet", registered.metadata.uid],
      ["NodeHasSufficientMemory", `Node ${NODE} status is now: NodeHasSufficientMemory`, "kubelet", registered.metadata.uid],
      ["NodeHasNoDiskPressure", `Node ${NODE} status is now: NodeHasNoDiskPressure`, "kubelet", registered.metadata.uid],
      ["NodeHasSufficientPID", `Node ${NODE} status is now: NodeHasSufficientPID`, "kubelet", registered.metadata.uid],
    ].sort());
    expect(kubectl(env, "describe", "node", NODE)).toMatch(/Normal\s+NodeHasSufficientMemory\s+\S+\s+kubelet\s+Node life-1 status is now: NodeHasSufficientMemory/);

    const lease = getJson(env, "lease", "-n", "kube-node-lease", NODE);
    expect(lease.spec).toMatchObject({ holderIdentity: NODE, leaseDurationSeconds: 40 });
    expect(lease.metadata.ownerReferences).toEqual([{ apiVersion: "v1", kind: "Node", name: NODE, uid: registered.metadata.uid }]);
    const renewed = await waitFor("the Lease renewed", () => {
      const now = getJson(env, "lease", "-n", "kube-node-lease", NODE);
      return now.spec.renewTime !== lease.spec.renewTime && now;
    }, 15_000);
    const interval = Date.parse(renewed.spec.renewTime) - Date.parse(lease.spec.renewTime);
    expect(interval).toBeGreaterThanOrEqual(9_000);
    expect(interval).toBeLessThan(12_000);
  }, 40_000);

  test("killed, the controller marks the Node Unknown after its grace; started again, the same Node is Ready", async () => {
    const before = node();
    await agents.at(-1)!.kill9();
    const killedAt = Date.now();
    const unknown = await waitFor("node life-1 Unknown", () => ready(node())?.status === "Unknown" && node(), 60_000);
    console.log(`[node lifecycle] Ready went Unknown ${((Date.now() - killedAt) / 1000).toFixed(1)}s after kill -9`);
    expect(ready(unknown)).toMatchObject({ reason: "NodeStatusUnknown", message: "Kubelet stopped posting node status." });
    expect(unknown.spec.taints).toContainEqual(expect.objectContaining({ key: "node.kubernetes.io/unreachable", effect: "NoSchedule" }));

    const agent = start();
    const startedAt = Date.now();
    const again = await waitFor("node life-1 Ready again", () => ready(node())?.status === "True" && node(), 15_000, () => agent.stderr);
    console.log(`[node lifecycle] Ready again ${((Date.now() - startedAt) / 1000).toFixed(1)}s after the restart`);
    expect(again.metadata.uid).toBe(before.metadata.uid);
    expect(Date.parse(ready(again).lastTransitionTime)).toBeGreaterThan(Date.parse(ready(unknown).lastTransitionTime) - 1000);
    await waitFor("the agent saying it found its Node", () => agent.stderr.includes(`node ${NODE}: registered before (uid ${before.metadata.uid})`), 10_000, () => agent.stderr);
    await waitFor("the unreachable taint lifted", () => !(node().spec.taints ?? []).some((t: any) => t.key === "node.kubernetes.io/unreachable"), 15_000);
    const events = getJson(env, "events", "-n", "default", "--field-selector", `involvedObject.kind=Node,involvedObject.uid=${before.metadata.uid},source=kubelet,reason=NodeReady`).items as any[];
    expect(events.map((event) => event.message)).toEqual([`Node ${NODE} status is now: NodeReady`]);
  }, 90_000);

  test("the API server away at start and cut off mid-run: the static pod runs throughout; one line when it goes, one when it is back; the Node and its Lease catch up", async () => {
    await agents.at(-1)?.terminate();
    const relay = await Relay.open(new URL(env.server));
    try {
      const relayed = join(ws.path, "relayed.kubeconfig");
      writeFileSync(relayed, readFileSync(kubeconfig, "utf8").replace(env.server, `https://127.0.0.1:${relay.port}`));
      relay.cut();
      // A static pod: the loop runs it whatever the API server does.
      ws.write("steady.yaml", e2ePodManifest("steady"));
      const agent = start(relayed);
      const running = await waitFor("the static pod running with no API server", () => containerRows(ws).find((row) => row.pod === `steady-${NODE}` && row.state === "running"), 15_000, () => agent.stdout + agent.stderr);
      await waitFor("the agent saying it has no API server at start", () => agent.stderr.includes("lost the API server"), 10_000, () => agent.stderr);
      await relay.reopen();
      await waitFor("the agent registered once the API server answers", () => agent.stderr.includes("answers again") && agent.stderr.includes(`node ${NODE}: registered before`), 15_000, () => agent.stderr);
      expect(ready(node()).status).toBe("True");

      relay.cut();
      const cutAt = Date.now();
      await waitFor("the agent saying it lost the API server", () => agent.stderr.match(/lost the API server/g)?.length === 2, 20_000, () => agent.stderr);
      // Long enough for a renewal round and its retries to fail (the back-off reaches 3.2s), each unsaid.
      await waitFor("12s of outage", () => Date.now() - cutAt > 12_000, 15_000);
      const cutRenewal = getJson(env, "lease", "-n", "kube-node-lease", NODE).spec.renewTime;
      expect(Date.now() - Date.parse(cutRenewal)).toBeGreaterThan(10_000);
      expect(agent.done).toBe(false);
      await relay.reopen();
      await waitFor("the agent saying the API server is back", () => agent.stderr.match(/answers again/g)?.length === 2, 20_000, () => agent.stderr);
      await waitFor("the Lease renewed after the outage", () => getJson(env, "lease", "-n", "kube-node-lease", NODE).spec.renewTime !== cutRenewal, 15_000);
      expect(containerRows(ws).find((row) => row.pod === `steady-${NODE}`)).toMatchObject({ state: "running", restart_count: 0, container_id: running.container_id });
      // One line per change of state, whatever the retries in between.
      expect(agent.stderr.match(/lost the API server/g)).toHaveLength(2);
      expect(agent.stderr.match(/answers again/g)).toHaveLength(2);
    } finally {
      relay.close();
    }
  }, 90_000);
});

/** A TCP relay to the API server that a test can cut (every connection dropped, none taken) and reopen on the same port. */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: URL,
    public port: number,
  ) {}

  static async open(target: URL): Promise<Relay> {
    const relay = new Relay(target, 0);
    await relay.listen();
    return relay;
  }

  private listen(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port), this.target.hostname);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {});
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, "127.0.0.1", () => {
      this.port = (server.address() as { port: number }).port;
      resolve();
    }));
  }

  cut(): void {
    this.server?.close();
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
  }

  reopen(): Promise<void> {
    return this.listen();
  }

  close(): void {
    this.cut();
  }
}
