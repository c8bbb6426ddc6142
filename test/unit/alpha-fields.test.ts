import { describe, expect, test } from "bun:test";
import { admitPod } from "../../src/manifest/admit.ts";
import { formatIssue } from "../../src/manifest/errors.ts";

const context = { file: "web.yaml", source: "/etc/minikubelet/web.yaml", node: "" };

function pod(spec: Record<string, unknown>, container: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web" },
    spec: { containers: [{ name: "web", image: "busybox", command: ["sleep", "1"], ...container }], ...spec },
  };
}

describe("fields of the v1.37 Pod behind alpha feature gates", () => {
  test("are known fields, and each one set is said to be dropped, naming its gate", () => {
    const raw = pod(
      { schedulingGroup: { podGroupName: "g" }, volumes: [{ name: "scratch", emptyDir: { mode: 0o700 } }] },
      {
        volumeMounts: [{ name: "scratch", mountPath: "/scratch", bindMountOptions: ["noexec"] }],
        readinessProbe: { httpGet: { port: 80, protocol: "H2C" } },
        lifecycle: { preStop: { httpGet: { port: 80, protocol: "H2C" } } },
      },
    );
    const { warnings } = admitPod(raw, context, { runtime: "docker" });
    const said = warnings.map(formatIssue);
    expect(said.filter((line) => line.startsWith("unknown field"))).toEqual([]);
    expect(said.filter((line) => line.includes("feature gate"))).toEqual([
      "spec.schedulingGroup: dropped: the GenericWorkload feature gate (alpha) is off, as in the API server's defaults, which drop this field",
      "spec.volumes[0].emptyDir.mode: dropped: the EmptyDirVolumeMode feature gate (alpha) is off, as in the API server's defaults, which drop this field",
      "spec.containers[0].volumeMounts[0].bindMountOptions: dropped: the VolumeBindMountOptions feature gate (alpha) is off, as in the API server's defaults, which drop this field",
      "spec.containers[0].readinessProbe.httpGet.protocol: dropped: the H2CContainerProbe feature gate (alpha) is off, as in the API server's defaults, which drop this field",
      "spec.containers[0].lifecycle.preStop.httpGet.protocol: dropped: the H2CContainerProbe feature gate (alpha) is off, as in the API server's defaults, which drop this field",
    ]);
  });

  test("a pod that sets none of them is told nothing of them", () => {
    const { warnings } = admitPod(pod({}, { readinessProbe: { httpGet: { port: 80 } } }), context, { runtime: "docker" });
    expect(warnings).toEqual([]);
  });
});
