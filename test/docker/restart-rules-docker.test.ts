/**
 * Container restart rules (KEP-5307) on the real DockerRuntime: a pod under restartPolicy Never,
 * read from YAML through the validator; a container whose rule is In [42] exits 42 on its first
 * run (remembered in an emptyDir) and is started again; its neighbour exits 1 and stays down.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { BUSYBOX, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

let volumeRoot: string;
let h: ReturnType<typeof realHarness>;
let spec: PodSpec | undefined;

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-rules-docker-"));
  h = realHarness(new DockerRuntime({ pauseImage: PAUSE, volumeRoot }), { baseSeconds: 0.4, capSeconds: 1.6 });
});

afterEach(async () => {
  await h.close();
  if (spec) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }
  rmSync(volumeRoot, { recursive: true, force: true });
});

const RULES = "restartPolicyRules: [{ action: Restart, exitCodes: { operator: In, values: [42] } }]";

describeDocker("restart rules on the docker runtime", () => {
  test("pod Never, rule In [42]: exit 42 restarts, exit 1 stays down", async () => {
    spec = validatePod(
      parse(`
apiVersion: v1
kind: Pod
metadata: { name: rules-${RUN}, namespace: mk-test }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  volumes: [{ name: state, emptyDir: {} }]
  containers:
    - name: retry
      image: ${BUSYBOX}
      imagePullPolicy: IfNotPresent
      command: [sh, -c, "if [ -e /state/ran ]; then exec sleep 60; fi; touch /state/ran; exit 42"]
      volumeMounts: [{ name: state, mountPath: /state }]
      restartPolicy: Never
      ${RULES}
    - name: fail
      image: ${BUSYBOX}
      imagePullPolicy: IfNotPresent
      command: [sh, -c, "exit 1"]
      restartPolicy: Never
      ${RULES}
`),
      { file: "rules.yaml", source: `/mk-test/${RUN}/rules.yaml`, node: "" },
    );
    await h.kubelet.sync(desired(spec));
    await h.event((e) => e.reason === "Exited" && e.container === "fail", 15_000, "fail's exit");
    await h.count((e) => e.reason === "Started" && e.container === "retry", 2, 15_000);
    await h.kubelet.idle();
    const record = h.kubelet.pods.get(spec.key)!;
    const [retry, fail] = record.app;
    expect(retry!.state).toBe("running");
    expect(restartCountOf(retry!)).toBe(1);
    expect(retry!.lastTermination?.exitCode).toBe(42);
    expect(fail!.state).toBe("terminated");
    expect(fail!.terminated?.exitCode).toBe(1);
    expect(h.events.filter((e) => e.reason === "Started" && e.container === "fail")).toHaveLength(1);
    expect(record.phase).toBe("Running");
  });
});
