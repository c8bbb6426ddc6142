/**
 * The security context on the real engine, as the upstream Security Context specs check it: the
 * user and group a container runs as, its extra groups, a read-only root filesystem, no_new_privs.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { containerStatus } from "../../src/kubelet/status/pod-status.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { BUSYBOX, describeDocker, docker, PAUSE } from "./helpers.ts";

const RUN = randomBytes(3).toString("hex");

let volumeRoot: string;
let h: ReturnType<typeof realHarness>;
const created: PodSpec[] = [];

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-security-docker-"));
  h = realHarness(new DockerRuntime({ pauseImage: PAUSE, volumeRoot }));
});

afterEach(async () => {
  await h.close();
  for (const spec of created.splice(0)) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }
  rmSync(volumeRoot, { recursive: true, force: true });
});

/** A one-container pod that never restarts, through the real validator. */
function terminatingPod(name: string, script: string, fields: string): PodSpec {
  const yaml = `
apiVersion: v1
kind: Pod
metadata: { name: ${name}-${RUN}, namespace: mk-test }
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  containers:
    - name: termination-message-container
      image: ${BUSYBOX}
      imagePullPolicy: IfNotPresent
      command: [/bin/sh, -c]
      args: [${JSON.stringify(script)}]
${fields}
`;
  const spec = validatePod(parse(yaml), { file: `${name}.yaml`, source: `/mk-test/${RUN}/${name}.yaml`, node: "" });
  created.push(spec);
  return spec;
}

/** Runs the pod to its container's exit and returns state.terminated as the status serves it. */
async function terminated(spec: PodSpec) {
  await h.kubelet.sync(desired(spec));
  await h.event((e) => e.reason === "Exited" && e.podUid === spec.uid, 15_000, "the container's exit");
  await h.kubelet.idle();
  const record = h.kubelet.pods.get(spec.key)!;
  const state = containerStatus(record.app[0]!, "docker").state?.terminated;
  if (!state) throw new Error(`${spec.fullName}: the container is not terminated`);
  return state;
}

describeDocker("the security context on the docker runtime", () => {
  test("runAsUser and runAsGroup (the container's over the pod's), supplementalGroups, a read-only root", async () => {
    const script = "{ echo \"$(id -u) $(id -g) $(id -G)\"; touch /probe 2>/dev/null && echo writable || echo read-only; grep NoNewPrivs /proc/self/status; } > /dev/termination-log";
    const spec = terminatingPod("ids", script, `      securityContext: { runAsUser: 65534, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }
  securityContext: { runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [5000] }`);
    const state = await terminated(spec);
    expect(state.exitCode).toBe(0);
    expect(state.message?.split("\n")).toEqual(["65534 3000 3000 5000", "read-only", "NoNewPrivs:\t1", ""]);
  }, 30_000);

  test("without a security context the image's user (root) and a writable root, as before", async () => {
    const spec = terminatingPod("plain", "{ id -u; touch /probe && echo writable; } > /dev/termination-log", "");
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["0", "writable", ""]);
  }, 30_000);
});
