/**
 * Two agents on this host join the real control plane as nodes `two-a` and `two-b` (each its own
 * database, kubelet port and serving certificate) and the cluster's controllers drive them: a
 * Deployment's pods spread across both by kube-scheduler, a Job runs to completion and its log is
 * read through the API server, and when one node dies for good (its agent and its pods killed) the
 * node-lifecycle controller marks it unreachable, evicts its pods and the Deployment is whole again
 * on the other node.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv } from "../cluster-fixtures.ts";
import { Agent, ensureBinary, freePort, isRunning, killRecordedContainers, processesMentioning, waitFor, Workspace } from "../e2e/helpers.ts";

const NODES = ["two-a", "two-b"] as const;
type NodeName = (typeof NODES)[number];
/** A namespace of this run's own: the last run's may still be going away. */
const NS = `two-nodes-${Date.now().toString(36)}`;
const DEPLOYMENT = "spread";
const JOB = "once";

interface Node {
  name: NodeName;
  ws: Workspace;
  agent: Agent;
}

describeCluster("node mode: a Deployment and a Job across two nodes, and one node lost", (env) => {
  const nodes = new Map<NodeName, Node>();

  /** Where the Deployment's pods are: node name -> how many are available there (not being deleted). */
  const deploymentPods = () => {
    const pods = getJson(env, "pods", "-n", NS, "-l", `app=${DEPLOYMENT}`).items as Record<string, any>[];
    return pods.filter((pod) => !pod.metadata.deletionTimestamp);
  };
  const available = () => getJson(env, "deployment", DEPLOYMENT, "-n", NS).status?.availableReplicas ?? 0;
  const world = () => `${kubectl(env, "get", "nodes", ...NODES, "-o", "wide")}\n${kubectl(env, "get", "pods", "-n", NS, "-o", "wide")}`;

  beforeAll(async () => {
    ensureBinary();
    removeNodes(env);
    kubectl(env, "create", "namespace", NS);
    for (const name of NODES) {
      const credentials = nodeCredentials(env, name);
      const ws = new Workspace();
      const port = await freePort();
      const agent = new Agent(ws, ["--kubeconfig", credentials.kubeconfig, "--kubelet-listen", `127.0.0.1:${port}`, "--tls-cert-file", credentials.cert, "--tls-private-key-file", credentials.key], { node: name });
      nodes.set(name, { name, ws, agent });
    }
    // Both Ready and free of the not-ready taint before anything is scheduled, or the first node up takes every pod.
    await waitFor("both nodes Ready and schedulable", () => NODES.every((name) => schedulable(env, name)), 45_000, () => world() + agentOutput(nodes));
  }, 60_000);

  afterAll(async () => {
    for (const node of nodes.values()) await node.agent.terminate(10_000, 2_000);
    for (const args of [["deployment", DEPLOYMENT], ["job", JOB]]) quietly(env, "delete", ...args, "-n", NS, "--wait=false", "--ignore-not-found");
    // Pods of a dead node stay Terminating: nothing will confirm their end but a forced delete.
    quietly(env, "delete", "pods", "--all", "-n", NS, "--force", "--grace-period=0");
    quietly(env, "delete", "namespace", NS, "--wait=false");
    removeNodes(env);
    for (const node of nodes.values()) stopPodsOf(node);
    for (const node of nodes.values()) node.ws.cleanup();
  });

  test("a Deployment of 3 is scheduled across both nodes and all 3 become available", async () => {
    apply(env, nodes.get("two-a")!.ws, deployment());
    await waitFor("3 available replicas", () => available() === 3, 60_000, world);
    const placed = new Set(deploymentPods().map((pod) => pod.spec.nodeName));
    expect([...placed].sort()).toEqual([...NODES]);
    for (const pod of deploymentPods()) expect(pod.status.containerStatuses[0].containerID).toStartWith("process://");
  }, 90_000);

  test("a Job completes and its pod's log is read through the API server", async () => {
    apply(env, nodes.get("two-a")!.ws, job());
    kubectl(env, "wait", "--for=condition=complete", `job/${JOB}`, "-n", NS, "--timeout=60s");
    const pod = (getJson(env, "pods", "-n", NS, "-l", `job-name=${JOB}`).items as Record<string, any>[])[0]!;
    expect(pod.status.phase).toBe("Succeeded");
    expect(NODES).toContain(pod.spec.nodeName);
    expect(kubectl(env, "logs", `job/${JOB}`, "-n", NS).trim()).toBe("done");
  }, 90_000);

  test("a node lost for good: Unknown, its pods evicted, and the Deployment whole again on the other node", async () => {
    const lost = nodes.get("two-b")!;
    const survivor = "two-a";
    expect(deploymentPods().some((pod) => pod.spec.nodeName === lost.name)).toBe(true);
    // Pods outlive a stopped agent by design: a dead machine takes both down.
    await lost.agent.kill9();
    stopPodsOf(lost);
    await waitFor(`${lost.name} Unknown`, () => readyStatus(env, lost.name) === "Unknown", 60_000, world);
    await waitFor(`3 available replicas, all on ${survivor}`, () => {
      const pods = deploymentPods();
      return available() === 3 && pods.length === 3 && pods.every((pod) => pod.spec.nodeName === survivor);
    }, 60_000, world);
    const node = getJson(env, "node", lost.name);
    expect(node.spec.taints.map((taint: { key: string; effect: string }) => `${taint.key}:${taint.effect}`)).toContain("node.kubernetes.io/unreachable:NoExecute");
    expect(readyStatus(env, survivor)).toBe("True");
  }, 150_000);
});

/** The Deployment: `sleep` (the process runtime needs a command), no token volume yet, and gone 2 s after its node is. */
function deployment(): Record<string, unknown> {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: DEPLOYMENT, namespace: NS },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: DEPLOYMENT } },
      template: {
        metadata: { labels: { app: DEPLOYMENT } },
        spec: {
          ...onTheseNodes(),
          terminationGracePeriodSeconds: 1,
          // Preferred, not required: once a node is gone its pods must be free to come back on the other.
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { app: DEPLOYMENT } } }],
          tolerations: ["node.kubernetes.io/unreachable", "node.kubernetes.io/not-ready"].map((key) => ({ key, operator: "Exists", effect: "NoExecute", tolerationSeconds: 2 })),
          containers: [{ name: "sleep", image: "busybox", command: ["sleep", "3600"] }],
        },
      },
    },
  };
}

function job(): Record<string, unknown> {
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name: JOB, namespace: NS },
    spec: {
      backoffLimit: 0,
      template: { spec: { ...onTheseNodes(), restartPolicy: "Never", containers: [{ name: "echo", image: "busybox", command: ["sh", "-c", "echo done"] }] } },
    },
  };
}

/** Only this file's two nodes (the suite's other files register nodes of their own), and no token volume (not mounted yet). */
function onTheseNodes(): Record<string, unknown> {
  const term = { matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [...NODES] }] };
  return { automountServiceAccountToken: false, affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } } };
}

function apply(env: ClusterEnv, ws: Workspace, object: Record<string, unknown>): void {
  const file = join(ws.path, `${(object.metadata as { name: string }).name}.json`);
  writeFileSync(file, JSON.stringify(object));
  kubectl(env, "create", "-f", file);
}

function readyStatus(env: ClusterEnv, name: string): string | undefined {
  return (getJson(env, "node", name).status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === "Ready")?.status;
}

/** Ready, and the node-lifecycle controller has lifted the taints it puts on a node that is not. */
function schedulable(env: ClusterEnv, name: string): boolean {
  const node = tryGetNode(env, name);
  if (!node) return false;
  const ready = (node.status?.conditions as { type: string; status: string }[] | undefined)?.find((c) => c.type === "Ready")?.status === "True";
  return ready && !(node.spec?.taints ?? []).length;
}

function tryGetNode(env: ClusterEnv, name: string): Record<string, any> | undefined {
  const result = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "get", "node", name, "-o", "json", "--ignore-not-found"], { stdout: "pipe", stderr: "pipe" });
  const text = result.stdout.toString().trim();
  return result.exitCode === 0 && text ? JSON.parse(text) : undefined;
}

/** The Nodes this file registers, as an admin removes a machine (a last run's too, so each run starts from none). */
function removeNodes(env: ClusterEnv): void {
  quietly(env, "delete", "node", ...NODES, "--ignore-not-found");
}

function quietly(env: ClusterEnv, ...args: string[]): void {
  Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, ...args], { stdout: "ignore", stderr: "ignore" });
}

/** Every container process the node's agent started, and anything else still running under its workspace. */
function stopPodsOf(node: Node): void {
  killRecordedContainers(node.ws.path);
  for (const left of processesMentioning(node.ws.path)) if (isRunning(left.pid)) process.kill(left.pid, "SIGKILL");
}

function agentOutput(nodes: Map<NodeName, Node>): string {
  return [...nodes.values()].map((node) => `\n--- ${node.name}\n${node.agent.stdout}${node.agent.stderr}`).join("");
}
