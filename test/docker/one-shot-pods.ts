/**
 * One-container pods that run once on the real engine, through the real validator and the loop,
 * to their exit: what a container could do or write is read back from state.terminated (its
 * termination message). Each test file that uses it gets its own harness, torn down after each test
 * with the containers of the pods it made.
 */
import { afterEach, beforeEach } from "bun:test";
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
import { BUSYBOX, docker, PAUSE } from "./helpers.ts";

export function oneShotPods(prefix: string) {
  const run = randomBytes(3).toString("hex");
  let volumeRoot: string;
  let h: ReturnType<typeof realHarness>;
  const created: PodSpec[] = [];

  beforeEach(() => {
    volumeRoot = mkdtempSync(join(tmpdir(), `mk-${prefix}-docker-`));
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

  /** Syncs the pod until its container's event `reason`; its state as the status serves it then. */
  async function settled(spec: PodSpec, reason: string, what: string) {
    await h.kubelet.sync(desired(spec));
    await h.event((e) => e.reason === reason && e.podUid === spec.uid, 15_000, what);
    await h.kubelet.idle();
    return containerStatus(h.kubelet.pods.get(spec.key)!.app[0]!, "docker").state ?? {};
  }

  return {
    /** A busybox pod that never restarts, running `script` under sh; `fields` are YAML lines added to its container (and after it, to the pod). */
    pod(name: string, script: string, fields: string): PodSpec {
      const yaml = `
apiVersion: v1
kind: Pod
metadata: { name: ${name}-${run}, namespace: mk-test }
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
      const spec = validatePod(parse(yaml), { file: `${name}.yaml`, source: `/mk-test/${run}/${name}.yaml`, node: "" });
      created.push(spec);
      return spec;
    },

    /** Syncs the pod until the kubelet refuses to create its container (a Failed event); returns state.waiting as the status serves it. */
    async refused(spec: PodSpec) {
      const state = (await settled(spec, "Failed", "the container's refusal")).waiting;
      if (!state) throw new Error(`${spec.fullName}: the container is not waiting`);
      return state;
    },

    /** Runs the pod to its container's exit and returns state.terminated as the status serves it. */
    async terminated(spec: PodSpec) {
      const state = (await settled(spec, "Exited", "the container's exit")).terminated;
      if (!state) throw new Error(`${spec.fullName}: the container is not terminated`);
      return state;
    },
  };
}
