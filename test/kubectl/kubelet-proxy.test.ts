/**
 * The real kubectl reaches the kubelet's endpoints through the API's node proxy, as in a cluster:
 * `kubectl get --raw /api/v1/nodes/NODE/proxy/metrics` on the compiled agent, the Node's
 * kubeletEndpoint port, the stats collector's Summary and resource metrics behind /stats/summary and
 * /metrics/resource, and another node's proxy refused as the API server refuses it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Agent, e2ePodManifest, Workspace, waitFor } from "../e2e/helpers.ts";
import { sample } from "../metrics-text.ts";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, KubectlSession, startAgentWithApi } from "./harness.ts";

let ws: Workspace;
let agent: Agent;
let session: KubectlSession;
let kubeletPort: number;

beforeAll(async () => {
  ws = new Workspace();
  ws.write("one.yaml", e2ePodManifest("one"));
  ({ agent, session } = await startAgentWithApi(ws, ["--kubelet-listen", "127.0.0.1:0", "--housekeeping-interval", "1s", "--stop-pods-on-exit"]));
  kubeletPort = Number(await waitFor("the kubelet address in the run banner", () => /minikubelet: kubelet +https:\/\/127\.0\.0\.1:(\d+)/.exec(agent.stderr)?.[1], 15_000, () => agent.stderr));
  await agent.waitForOutput("Started e2e/one-n1 main", 20_000);
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  session?.[Symbol.dispose]();
  ws?.cleanup();
}, 60_000);

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(`kubelet endpoints through the node proxy (${label})`, binary, (kubectl) => {
    test("get --raw .../proxy/metrics, /pods and /healthz answer as the kubelet does", async () => {
      const metrics = await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/n1/proxy/metrics"]);
      expect(metrics.status).toBe(0);
      expect(sample(metrics.stdout, "kubelet_running_pods")).toBe(1);
      expect(sample(metrics.stdout, 'kubelet_running_containers{container_state="running"}')).toBe(1);
      const pods = await session.run(kubectl, ["get", "--raw", `/api/v1/nodes/n1:${kubeletPort}/proxy/pods`]);
      expect(JSON.parse(pods.stdout).items.map((pod: { metadata: { name: string } }) => pod.metadata.name)).toEqual(["one-n1"]);
      expect(await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/n1/proxy/healthz"])).toMatchObject({ status: 0, stdout: "ok" });
    });

    test("get --raw .../proxy/stats/summary and /metrics/resource: the node and the running container, from the collector's readings", async () => {
      const summary = await waitFor(
        "a summary with the container's cpu and memory",
        async () => {
          const raw = await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/n1/proxy/stats/summary"]);
          const parsed = raw.status === 0 ? JSON.parse(raw.stdout) : undefined;
          const main = parsed?.pods?.find((pod: any) => pod.podRef.name === "one-n1")?.containers?.find((c: any) => c.name === "main");
          return main?.cpu?.usageNanoCores !== undefined && main?.memory?.workingSetBytes !== undefined ? parsed : undefined;
        },
        20_000,
      );
      expect(summary.node.nodeName).toBe("n1");
      expect(summary.node.cpu.usageCoreNanoSeconds).toBeGreaterThan(0);
      expect(summary.node.memory.workingSetBytes).toBeGreaterThan(0);
      expect(summary.pods.find((pod: any) => pod.podRef.name === "one-n1").podRef.namespace).toBe("e2e");
      const resource = await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/n1/proxy/metrics/resource"]);
      expect(resource.status).toBe(0);
      expect(resource.stdout).toMatch(/^container_cpu_usage_seconds_total\{container="main",namespace="e2e",pod="one-n1"\} [0-9.e+-]+ \d+$/m);
      expect(resource.stdout).toMatch(/^node_memory_working_set_bytes [0-9.e+-]+ \d+$/m);
    });

    test("another node's proxy is NotFound; the Node reports the kubelet's port", async () => {
      const other = await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/nope/proxy/metrics"]);
      expect(other.status).toBe(1);
      expect(other.stderr).toContain('Error from server (NotFound): nodes "nope" not found');
      const port = await session.run(kubectl, ["get", "node", "n1", "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}"]);
      expect(port.stdout).toBe(String(kubeletPort));
    });
  });
}
