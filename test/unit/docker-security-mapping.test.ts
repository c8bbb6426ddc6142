/**
 * The security context on docker, pure: the container's settings over the pod's, as the kubelet's
 * determineEffectiveSecurityContext makes the CRI's, become the engine's user, groups and privileges.
 */
import { expect, test } from "bun:test";
import { containerCreateOptions } from "../../src/runtime/docker/docker-container-config.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { container, pod } from "../pod-builder.ts";

function withSecurity(podContext: Record<string, unknown> | undefined, containerContext: Record<string, unknown> | undefined): PodSpec {
  const p = pod();
  const spec = p.manifest.spec as Record<string, any>;
  return {
    ...p,
    manifest: {
      ...p.manifest,
      spec: { ...spec, ...(podContext && { securityContext: podContext }), containers: spec.containers.map((c: object) => ({ ...c, ...(containerContext && { securityContext: containerContext }) })) },
    },
  };
}

const optionsOf = (p: PodSpec) => containerCreateOptions({ pod: p, container: container("web"), kind: "app", attempt: 0, sandbox: { id: "sb1", ip: "", podUid: p.uid } }, []);

test("runAsUser and runAsGroup: the container's over the pod's, as the engine's User", () => {
  expect(optionsOf(withSecurity({ runAsUser: 1000, runAsGroup: 3000 }, undefined)).User).toBe("1000:3000");
  expect(optionsOf(withSecurity({ runAsUser: 1000, runAsGroup: 3000 }, { runAsUser: 65534 })).User).toBe("65534:3000");
  expect(optionsOf(withSecurity(undefined, { runAsUser: 0 })).User).toBe("0");
  expect(optionsOf(withSecurity(undefined, undefined))).not.toHaveProperty("User");
});

test("the pod's supplementalGroups and fsGroup are the container's extra groups", () => {
  expect(optionsOf(withSecurity({ supplementalGroups: [5000, 5001], fsGroup: 123 }, undefined)).HostConfig?.GroupAdd).toEqual(["5000", "5001", "123"]);
});

test("privileged, no_new_privs when allowPrivilegeEscalation is false, a read-only root, capabilities", () => {
  const host = optionsOf(withSecurity(undefined, { privileged: true, readOnlyRootFilesystem: true, capabilities: { add: ["NET_ADMIN"], drop: ["ALL"] } })).HostConfig!;
  expect(host).toMatchObject({ Privileged: true, ReadonlyRootfs: true, CapAdd: ["NET_ADMIN"], CapDrop: ["ALL"] });
  expect(optionsOf(withSecurity(undefined, { allowPrivilegeEscalation: false })).HostConfig?.SecurityOpt).toEqual(["no-new-privileges"]);
  const plain = optionsOf(withSecurity(undefined, { allowPrivilegeEscalation: true })).HostConfig!;
  for (const key of ["Privileged", "SecurityOpt", "ReadonlyRootfs", "CapAdd", "CapDrop", "GroupAdd"]) expect(plain).not.toHaveProperty(key);
});

test("the kubelet's OOM score adjustment is the engine's OomScoreAdj; without one the engine's own is left", () => {
  const p = pod({ name: "web" });
  const config = { pod: p, container: container("web"), kind: "app" as const, attempt: 0, sandbox: { id: "sb1", ip: "", podUid: p.uid } };
  expect(containerCreateOptions({ ...config, oomScoreAdj: 999 }, []).HostConfig?.OomScoreAdj).toBe(999);
  expect(containerCreateOptions(config, []).HostConfig).not.toHaveProperty("OomScoreAdj");
});
