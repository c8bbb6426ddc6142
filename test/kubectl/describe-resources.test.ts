/**
 * Real kubectl describes a pod with resources from our API: each container's Limits and Requests
 * (requests defaulted from limits, quantities as the API server serves them) and the QoS Class we
 * computed; our own `describe` prints the same container lines. And kubectl's writes to the compiled
 * agent: quantities served canonical, a request above its limit refused in the API server's words.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { tempDir } from "../store-fixtures.ts";
import { desired } from "../pod-builder.ts";
import { Agent, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, fakeAgentWithApi, KUBECTL, KUBECTLS_UNDER_TEST, KubectlSession, startAgentWithApi } from "./harness.ts";

const manifest = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "demo" },
  spec: {
    initContainers: [{ name: "proxy", image: "busybox:1", command: ["sleep", "3600"], restartPolicy: "Always", resources: { limits: { cpu: "0.1", memory: "32Mi" } } }],
    containers: [{ name: "web", image: "busybox:1", command: ["sleep", "3600"], resources: { limits: { cpu: "1", memory: "1024Mi" }, requests: { cpu: "250m" } } }],
  },
};

/** One container's resource blocks as printed: from `Limits:` to the next container field that is not Requests. */
function resourceBlocks(text: string, container: string): string[] {
  const lines = text.split("\n");
  const start = lines.indexOf(`  ${container}:`);
  const from = lines.indexOf("    Limits:", start);
  const to = lines.findIndex((line, i) => i > from && /^ {4}\S/.test(line) && !line.startsWith("    Requests:"));
  return lines.slice(from, to);
}

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(label, binary, (kubectl) => {
    test("kubectl describe pod prints Limits, Requests and QoS Class, as our describe does", async () => {
      using scratch = tempDir("minikubelet-kubectl-resources-");
      await using fake = fakeAgentWithApi(scratch.path);
      const spec = validatePod(manifest, { file: "web.yaml", source: "/m/web.yaml", node: "lab" });
      await fake.kubelet.sync(desired(spec));
      await fake.advance(2);

      const result = await fake.session.run(kubectl, ["describe", "pod", "web-lab", "-n", "demo"]);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      // Aligned by kubectl's tabwriter: the Requests lines share a block with Environment and Mounts.
      expect(resourceBlocks(result.stdout, "web")).toEqual(["    Limits:", "      cpu:     1", "      memory:  1Gi", "    Requests:", "      cpu:        250m", "      memory:     1Gi"]);
      expect(resourceBlocks(result.stdout, "proxy")).toEqual(["    Limits:", "      cpu:     100m", "      memory:  32Mi", "    Requests:", "      cpu:        100m", "      memory:     32Mi"]);
      expect(result.stdout).toMatch(/\nQoS Class: +Burstable\n/);

      let ours = "";
      await describeCommand("pod", "web-lab", { db: fake.dbPath, namespace: "demo" }, { clock: fake.clock, stdout: (t) => (ours += t), utcOffsetMinutes: 0 });
      for (const container of ["proxy", "web"]) expect(resourceBlocks(ours, container)).toEqual(resourceBlocks(result.stdout, container));
      expect(ours).toMatch(/\nQoS Class: +Burstable\n/);
    });
  });
}

describe("kubectl writes pods with resources to the compiled agent (process runtime)", () => {
  let ws: Workspace;
  let agent: Agent;
  let session: KubectlSession;

  beforeAll(async () => {
    ws = new Workspace();
    ({ agent, session } = await startAgentWithApi(ws, ["--stop-pods-on-exit"]));
  }, 120_000);

  afterAll(async () => {
    await agent?.terminate();
    session?.[Symbol.dispose]();
    ws?.cleanup();
  }, 60_000);

  const podFile = (name: string, resources: string): string => {
    const path = join(session.dir, `${name}.yaml`);
    writeFileSync(path, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - name: app\n      image: busybox\n      command: [sleep, '3600']\n      resources: ${resources}\n`);
    return path;
  };

  describeWithKubectl("create -f", KUBECTL.default, (kubectl) => {
    test("numbers and fractions are quantities; the server answers with them canonical, defaulted, and classed", async () => {
      const created = await session.run(kubectl, ["create", "-f", podFile("sized", "{limits: {cpu: 1, memory: 64Mi}, requests: {cpu: 0.5}}"), "-o", "json"]);
      expect(created.stderr).toBe("");
      const object = JSON.parse(created.stdout);
      expect(object.spec.containers[0].resources).toEqual({ limits: { cpu: "1", memory: "64Mi" }, requests: { cpu: "500m", memory: "64Mi" } });
      expect(object.status.qosClass).toBe("Burstable");
    });

    test("a request above its limit is refused with the API server's words", async () => {
      const refused = await session.run(kubectl, ["create", "-f", podFile("greedy", "{limits: {cpu: 500m}, requests: {cpu: 600m}}")]);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('The Pod "greedy" is invalid: spec.containers[0].resources.requests: Invalid value: "600m": must be less than or equal to cpu limit of 500m');
    });
  });
});
