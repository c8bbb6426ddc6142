/** runAsNonRoot as the kubelet's verifyRunAsNonRoot decides it, in its words (kubelet/run-as-non-root.ts). */
import { expect, test } from "bun:test";
import { requiresNonRoot, runAsNonRootRefusal } from "../../src/kubelet/run-as-non-root.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";

const pod = (podContext: Record<string, unknown>, own: Record<string, unknown> = {}) =>
  validatePod(
    { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "d" }, spec: { securityContext: podContext, containers: [{ name: "app", image: "busybox", command: ["true"], securityContext: own }] } },
    { file: "p", source: "api", node: "" },
  );
const WHERE = '(pod: "p_d(u)", container: app)';
const refusal = (spec: ReturnType<typeof pod>, user: { uid?: number; username?: string }) => runAsNonRootRefusal(spec, "app", user, "p_d(u)");

test("not asked, or asked false (the container's over the pod's): no check at all", () => {
  expect(requiresNonRoot(pod({}), "app")).toBe(false);
  expect(requiresNonRoot(pod({ runAsNonRoot: true }, { runAsNonRoot: false }), "app")).toBe(false);
  expect(refusal(pod({ runAsNonRoot: true }, { runAsNonRoot: false }), { uid: 0 })).toBeUndefined();
});

test("a runAsUser decides alone: 0 breaks the policy, any other passes whatever the image", () => {
  expect(refusal(pod({ runAsNonRoot: true, runAsUser: 0 }), { uid: 1000 })).toBe(`container's runAsUser breaks non-root policy ${WHERE}`);
  expect(refusal(pod({ runAsNonRoot: true }, { runAsUser: 1000 }), { uid: 0 })).toBeUndefined();
});

test("else the image's user: root (or none) refused, a name refused as unverifiable, another uid passes", () => {
  expect(refusal(pod({ runAsNonRoot: true }), {})).toBe(`container has runAsNonRoot and image will run as root ${WHERE}`);
  expect(refusal(pod({}, { runAsNonRoot: true }), { uid: 0 })).toBe(`container has runAsNonRoot and image will run as root ${WHERE}`);
  expect(refusal(pod({ runAsNonRoot: true }), { username: "nobody" })).toBe(`container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root ${WHERE}`);
  expect(refusal(pod({ runAsNonRoot: true }), { uid: 65534 })).toBeUndefined();
});
