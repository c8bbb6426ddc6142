/**
 * The downward API on the docker runtime: the container's env carries the pause container's IP
 * (known only once the sandbox runs) and its memory limit, and its downwardAPI volume is
 * bind-mounted read-only at mountPath, the labels readable through `..data`.
 */
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { desired } from "../pod-builder.ts";
import { BUSYBOX, describeDocker, docker, dockerLoopFixture } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

const fx = dockerLoopFixture("mk-downward-docker-");

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
    fx.created.push(pod);
    await fx.h.kubelet.sync(desired(pod));
    const exited = await fx.h.event((e) => e.reason === "Exited" && e.container === "reader", 20_000);
    expect(exited.message).toBe("Container reader exited with code 0 (Completed)");
    const record = fx.h.kubelet.pods.get(pod.key)!;
    const ip = record.sandbox!.ip;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(ip).not.toBe("127.0.0.1");
    expect(await fx.runtime.readLogs(record.app[0]!.containerId!)).toBe(`ip=${ip} mem=48\napp="web"\nrun="${RUN}"\n1\nread-only\n`);
  });
});
