/**
 * The pod fields issue 37 found accepted and dropped without a word: each is now a warning (which
 * `validate` prints, the API's write answers as a Warning header and the agent records as one
 * UnsupportedField event) unless the runtime honours it.
 */
import { expect, test } from "bun:test";
import { admitPod } from "../../src/manifest/admit.ts";
import { formatIssue } from "../../src/manifest/errors.ts";
import type { RuntimeName } from "../../src/manifest/runtime-rules.ts";

const pod = (spec: Record<string, unknown>, container: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p" },
  spec: { ...spec, containers: [{ name: "app", image: "busybox", command: ["sleep", "1"], ...container }] },
});

const warnings = (raw: unknown, runtime: RuntimeName, apiObjects?: "allowed") =>
  admitPod(raw, { file: "p.yaml", source: "p.yaml", node: "", ...(apiObjects && { apiObjects }) }, { runtime }).warnings.map(formatIssue);

test("host namespaces: a process shares them all, so only docker is told of hostPID and hostIPC; no runtime makes a user namespace", () => {
  const raw = pod({ hostNetwork: true, hostPID: true, hostIPC: true, hostUsers: false });
  expect(warnings(raw, "process")).toEqual(["spec.hostUsers: not honoured by the process runtime: the containers run in the host's user namespace, their root the host's root"]);
  expect(warnings(raw, "docker")).toEqual([
    "spec.hostPID: not honoured by the docker runtime: the pod's containers keep their own process namespace",
    "spec.hostIPC: not honoured by the docker runtime: the pod's containers keep their own IPC namespace",
    "spec.hostUsers: not honoured by the docker runtime: the containers run in the host's user namespace, their root the host's root",
  ]);
  expect(warnings(pod({ hostPID: false, hostIPC: false, hostUsers: true }), "docker")).toEqual([]);
});

test("imagePullSecrets: never used by the process runtime, and docker pulls with the engine's credentials", () => {
  const raw = pod({ imagePullSecrets: [{ name: "regcred" }] });
  expect(warnings(raw, "process")).toEqual(["spec.imagePullSecrets: not used: the process runtime pulls no images"]);
  expect(warnings(raw, "docker")).toEqual(["spec.imagePullSecrets: not used: the docker runtime pulls with the engine's own credentials (docker login on the host)"]);
});

test("a process's hostPort: told when it differs from the port the process binds, silent when they agree", () => {
  expect(warnings(pod({}, { ports: [{ containerPort: 8080, hostPort: 80 }] }), "process")).toEqual([
    "spec.containers[0].ports[0].hostPort: not honoured by the process runtime: the process binds its own port on the host (containerPort 8080); nothing maps hostPort 80 to it",
  ]);
  expect(warnings(pod({}, { ports: [{ containerPort: 8080, hostPort: 8080 }] }), "process")).toEqual([]);
});

test("a static pod's ServiceAccount is told it runs without a token; a pod an API server admitted (its token mounted) is not", () => {
  const raw = pod({ serviceAccountName: "builder", automountServiceAccountToken: true });
  const why = "not honoured: a static pod runs without a ServiceAccount token; a pod created through the agent's API (kubectl apply -f FILE) runs with its ServiceAccount's";
  expect(warnings(raw, "process")).toEqual([`spec.serviceAccountName: ${why}`, `spec.automountServiceAccountToken: ${why}`]);
  expect(warnings(raw, "process", "allowed")).toEqual([]);
  expect(warnings(pod({ automountServiceAccountToken: false }), "docker")).toEqual([]);
});

test("the API's default terminationMessagePath is no warning; a path the user chose is", () => {
  expect(warnings(pod({}, { terminationMessagePath: "/dev/termination-log" }), "process")).toEqual([]);
  expect(warnings(pod({}, { terminationMessagePath: "/tmp/done" }), "process")).toHaveLength(1);
});

test("the process runtime tells of a mountPath the author wrote, not of the ServiceAccount admission's token mount", () => {
  const token = { name: "kube-api-access-x2k9f", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true };
  const volumes = [{ name: "data", emptyDir: {} }, { name: "kube-api-access-x2k9f", emptyDir: {} }, { name: "mine", emptyDir: {} }];
  const raw = pod({ volumes }, { volumeMounts: [{ name: "data", mountPath: "/data" }, token] });
  expect(warnings(raw, "process", "allowed")).toEqual([
    "spec.containers[0].volumeMounts[0].mountPath: honoured by the process runtime only as root and where the path exists on the host (bound in the container's own mount namespace); else the process finds the volume's host path in $MINIKUBELET_VOLUME_DATA",
  ]);
  // The same path under a volume of the author's own naming is the author's mount, and is told.
  expect(warnings(pod({ volumes }, { volumeMounts: [{ ...token, name: "mine" }] }), "process", "allowed")).toHaveLength(2);
});
