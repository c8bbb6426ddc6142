/**
 * `describe pod` shows downward API env and volumes as kubectl does: `VALUE (v1:FIELD)` read from
 * the served pod, `VALUE (limits.cpu)` from the container's resources (`node allocatable` for an
 * unset limit), and a DownwardAPI volume's items as `FIELD -> PATH`.
 */
import { expect, test } from "bun:test";
import { describePodText } from "../../src/cli/describe/describe-pod.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { newPodRecord } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

test("env references and a downwardAPI volume, in kubectl's words", () => {
  const spec = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo", labels: { app: "web" } },
      spec: {
        volumes: [{ name: "info", downwardAPI: { items: [{ path: "labels", fieldRef: { fieldPath: "metadata.labels" } }, { path: "cpu", resourceFieldRef: { containerName: "web", resource: "requests.cpu" } }] } }],
        containers: [
          {
            name: "web",
            image: "busybox:1",
            resources: { limits: { memory: "64Mi" }, requests: { cpu: "250m" } },
            env: [
              { name: "PLAIN", value: "x" },
              { name: "NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
              { name: "APP", valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
              { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
              { name: "MEM", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "1Mi" } } },
              { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } },
              { name: "REQ", valueFrom: { resourceFieldRef: { resource: "requests.cpu", divisor: "1m" } } },
            ],
            volumeMounts: [{ name: "info", mountPath: "/etc/info" }],
          },
        ],
      },
    },
    { file: "web.yaml", source: "/m/web.yaml", node: "lab" },
  );
  const pod = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" });
  const lines = describePodText({ pod, spec, events: [], attempts: [], now: 0, utcOffsetMinutes: 0 }).split("\n");
  const env = lines.indexOf("    Environment:");
  expect(lines.slice(env + 1, env + 8).map((line) => line.replace(/ +/g, " "))).toEqual([
    " PLAIN: x",
    " NAME: web-lab (v1:metadata.name)",
    " APP: web (v1:metadata.labels['app'])",
    " IP: (v1:status.podIP)",
    " MEM: 64 (limits.memory)",
    " CPU: node allocatable (limits.cpu)",
    " REQ: 250 (requests.cpu)",
  ]);
  const volume = lines.indexOf("  info:");
  expect(lines.slice(volume + 1, volume + 5).map((line) => line.replace(/ +/g, " "))).toEqual([
    " Type: DownwardAPI (a volume populated by information about the pod)",
    " Items:",
    " metadata.labels -> labels",
    " requests.cpu -> cpu",
  ]);
  expect(lines).toContain("      /etc/info from info (rw)");
});
