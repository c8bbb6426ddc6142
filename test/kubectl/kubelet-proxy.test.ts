/**
 * The real kubectl reaches the kubelet's endpoints through the API's node proxy, as in a cluster:
 * `kubectl get --raw /api/v1/nodes/NODE/proxy/metrics` on the compiled agent, the Node's
 * kubeletEndpoint port, and another node's proxy refused as the API server refuses it.
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
  ({ agent, session } = await startAgentWithApi(ws, ["--kubelet-listen", "127.0.0.1:0", "--stop-pods-on-exit"]));
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

    test("another node's proxy is NotFound; the Node reports the kubelet's port", async () => {
      const other = await session.run(kubectl, ["get", "--raw", "/api/v1/nodes/nope/proxy/metrics"]);
      expect(other.status).toBe(1);
      expect(other.stderr).toContain('Error from server (NotFound): nodes "nope" not found');
      const port = await session.run(kubectl, ["get", "node", "n1", "-o", "jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}"]);
      expect(port.stdout).toBe(String(kubeletPort));
    });
  });
}
