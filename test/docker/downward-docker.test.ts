/**
 * The downward API on the docker runtime: the container's env carries the pause container's IP
 * (known only once the sandbox runs) and its memory limit, and its downwardAPI volume is
 * bind-mounted read-only at mountPath, the labels readable through `..data`.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validate.ts";
import { DockerRuntime } from "../../src/runtime/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { BUSYBOX, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

let volumeRoot: string;
let runtime: DockerRuntime;
let h: ReturnType<typeof realHarness>;
const created: PodSpec[] = [];

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-downward-docker-"));
  runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  for (const spec of created.splice(0)) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }
  rmSync(volumeRoot, { recursive: true, force: true });
});

describeDocker("the downward API on docker", () => {
  test("env from fieldRef (the sandbox's IP) and resourceFieldRef, and a read-only downwardAPI volume at mountPath", async () => {
    const pod = validatePod(
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `downward-${RUN}`, namespace: "mk-test", labels: { app: "web", run: RUN } },
        spec: {
          restartPolicy: "Never",
          terminationGracePeriodSeconds: 1,
          volumes: [{ name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }] } }],
          containers: [
            {
              name: "reader",
              image: BUSYBOX,
              imagePullPolicy: "IfNotPresent",
              command: ["sh", "-c", 'echo "ip=$POD_IP mem=$MEM_MI"; cat /etc/podinfo/labels; echo; ls -a /etc/podinfo | grep -c "^\\.\\.data$"; touch /etc/podinfo/x 2>/dev/null && echo writable || echo read-only'],
              env: [
                { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
                { name: "MEM_MI", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
              ],
              resources: { limits: { memory: "48Mi" } },
              volumeMounts: [{ name: "info", mountPath: "/etc/podinfo" }],
            },
          ],
        },
      },
      { file: "downward.yaml", source: `/mk-test/${RUN}/downward.yaml`, node: "" },
    );
    created.push(pod);
    await h.kubelet.sync(desired(pod));
    const exited = await h.event((e) => e.reason === "Exited" && e.container === "reader", 20_000);
    expect(exited.message).toBe("Container reader exited with code 0 (Completed)");
    const record = h.kubelet.pods.get(pod.key)!;
    const ip = record.sandbox!.ip;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(ip).not.toBe("127.0.0.1");
    expect(await runtime.readLogs(record.app[0]!.containerId!)).toBe(`ip=${ip} mem=48\napp="web"\nrun="${RUN}"\n1\nread-only\n`);
  });
});
