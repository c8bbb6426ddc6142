/**
 * The kubelet's sysctl admit handler: a pod's sysctls must be safe ones, and not of a namespace it
 * shares with the host; else Failed, SysctlForbidden, in the kubelet's words, before the OS and
 * the resources are looked at.
 */
import { expect, test } from "bun:test";
import { sysctlRefusal } from "../../src/kubelet/admission/sysctl-admission.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";
import { normalizeSysctlName } from "../../src/manifest/sysctls.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod } from "../pod-builder.ts";

function withSysctls(name: string, sysctls: { name: string; value: string }[], extra: Record<string, unknown> = {}) {
  const spec = pod({ name, containers: [container("main")] });
  spec.manifest = { ...spec.manifest, spec: { ...((spec.manifest.spec as object) ?? {}), securityContext: { sysctls }, ...extra } };
  return spec;
}

test("safe sysctls pass, in either spelling; an unsafe one, or a net one with the host's network, is refused in the kubelet's words", () => {
  expect(sysctlRefusal(withSysctls("a", [{ name: "kernel.shm_rmid_forced", value: "1" }, { name: "net/ipv4/ip_local_port_range", value: "1024 65535" }]))).toBeUndefined();
  expect(sysctlRefusal(withSysctls("b", [{ name: "kernel.msgmax", value: "10000" }]))).toEqual({ reason: "SysctlForbidden", message: 'forbidden sysctl: "kernel.msgmax" not allowlisted' });
  expect(sysctlRefusal(withSysctls("c", [{ name: "net.ipv4.tcp_syncookies", value: "1" }], { hostNetwork: true }))).toEqual({
    reason: "SysctlForbidden",
    message: 'forbidden sysctl: "net.ipv4.tcp_syncookies" not allowed with host Net enabled',
  });
  expect(sysctlRefusal(withSysctls("d", [{ name: "kernel.shm_rmid_forced", value: "1" }], { hostIPC: true }))?.message).toBe('forbidden sysctl: "kernel.shm_rmid_forced" not allowed with host IPC enabled');
  expect(normalizeSysctlName("net/ipv4/conf/eno2.100/rp_filter")).toBe("net.ipv4.conf.eno2/100.rp_filter");
});

test("the loop leaves a pod with an unsafe sysctl Failed, SysctlForbidden, its containers never started", async () => {
  const h = harness();
  const unsafe = withSysctls("unsafe", [{ name: "kernel.msgmax", value: "10000" }]);
  const safe = withSysctls("safe", [{ name: "kernel.shm_rmid_forced", value: "1" }]);
  await h.kubelet.sync(desired(unsafe, safe));
  await h.advance(1);
  const status = (key: string) => servedPod(h.pod(key)!, { runtimeName: "fake" }).status!;
  expect(status(unsafe.key)).toMatchObject({ phase: "Failed", reason: "SysctlForbidden", message: 'Pod was rejected: forbidden sysctl: "kernel.msgmax" not allowlisted' });
  expect(h.pod(unsafe.key)!.app[0]!.attempts).toBe(0);
  expect(status(safe.key).phase).toBe("Running");
});
