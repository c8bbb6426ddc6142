/**
 * The downward API with real processes: a container reads its env from fieldRef and
 * resourceFieldRef, and a file of its downwardAPI volume, which the process runtime hands over in
 * MINIKUBELET_VOLUME_<NAME> (no mount namespace, so mountPath is not honoured).
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-downward-"));
  runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

test("env from fieldRef and resourceFieldRef, and a downwardAPI volume file, as a process reads them", async () => {
  const pod = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "downward", namespace: "demo", labels: { app: "web", tier: "front" } },
      spec: {
        restartPolicy: "Never",
        volumes: [{ name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } }],
        containers: [
          {
            name: "reader",
            image: "busybox",
            command: ["sh", "-c", 'echo "name=$POD_NAME ip=$POD_IP mem=$MEM_MI"; cat "$MINIKUBELET_VOLUME_INFO/labels"; echo'],
            env: [
              { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
              { name: "MEM_MI", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
            ],
            resources: { limits: { memory: "48Mi" } },
            volumeMounts: [{ name: "info", mountPath: "/etc/podinfo" }],
          },
        ],
      },
    },
    { file: "downward.yaml", source: join(root, "downward.yaml"), node: "lab" },
  );
  await h.kubelet.sync(desired(pod));
  const exited = await h.event((e) => e.reason === "Exited" && e.container === "reader");
  expect(exited.message).toBe("Container reader exited with code 0 (Completed)");
  const id = h.kubelet.pods.get(pod.key)!.app[0]!.containerId!;
  expect(await runtime.readLogs(id)).toBe('name=downward-lab ip=127.0.0.1 mem=48\napp="web"\ntier="front"\n');
});
