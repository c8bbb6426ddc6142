/**
 * Termination messages on the real engine, as the upstream "Container Runtime blackbox test on
 * terminated container" specs check them: a file of the attempt's own mounted at the
 * terminationMessagePath, writable by a non-root user, read at the exit into
 * state.terminated.message; with FallbackToLogsOnError the end of a failed container's log.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
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
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-termination-docker-"));
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

describeDocker("termination messages on the docker runtime", () => {
  test("a non-root user writes the message at a non-default path: state.terminated.message", async () => {
    // The container drops to nobody itself, as the upstream spec's image does (runAsUser: security-context-docker.test.ts).
    const spec = terminatingPod("custom-path", "su -s /bin/sh nobody -c '/bin/echo -n DONE > /dev/termination-custom-log'", "      terminationMessagePath: /dev/termination-custom-log");
    const state = await terminated(spec);
    expect(state.exitCode).toBe(0);
    expect(state.message).toBe("DONE");
    expect(existsSync("/dev/termination-custom-log")).toBe(false);
  });

  test("the default path as root", async () => {
    const state = await terminated(terminatingPod("default-path", "/bin/echo -n DONE > /dev/termination-log", ""));
    expect(state.message).toBe("DONE");
  });

  test("FallbackToLogsOnError: a failed container that wrote no file gets its log", async () => {
    const state = await terminated(terminatingPod("from-log", "/bin/echo -n DONE; /bin/false", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(state.exitCode).toBe(1);
    expect(state.message).toBe("DONE");
  });

  test("FallbackToLogsOnError: a container that succeeds gets no message from its log", async () => {
    const fromLogOnly = await terminated(terminatingPod("succeeds", "/bin/echo -n DONE; /bin/true", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(fromLogOnly.message).toBeUndefined();
  });

  test("FallbackToLogsOnError: a container that succeeds gets its file's message", async () => {
    const fromFile = await terminated(terminatingPod("from-file", "/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(fromFile.message).toBe("OK");
  });
});
