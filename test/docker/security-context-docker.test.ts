/**
 * The security context on the real engine, as the upstream Security Context specs check it: the
 * user and group a container runs as, its extra groups, a read-only root filesystem, no_new_privs,
 * runAsNonRoot's check against the image's user, the pod's sysctls, and fsGroup's emptyDirs.
 */
import { expect, test } from "bun:test";
import { describeDocker } from "./helpers.ts";
import { oneShotPods } from "./one-shot-pods.ts";

const { pod: terminatingPod, terminated, refused } = oneShotPods("security");

describeDocker("the security context on the docker runtime", () => {
  test("runAsUser and runAsGroup (the container's over the pod's), supplementalGroups, a read-only root", async () => {
    const script = "{ echo \"$(id -u) $(id -g) $(id -G)\"; touch /probe 2>/dev/null && echo writable || echo read-only; grep NoNewPrivs /proc/self/status; } > /dev/termination-log";
    const spec = terminatingPod("ids", script, `      securityContext: { runAsUser: 65534, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false }
  securityContext: { runAsUser: 1000, runAsGroup: 3000, supplementalGroups: [5000] }`);
    const state = await terminated(spec);
    expect(state.exitCode).toBe(0);
    expect(state.message?.split("\n")).toEqual(["65534 3000 3000 5000", "read-only", "NoNewPrivs:\t1", ""]);
  }, 30_000);

  test("runAsNonRoot: an image that runs as root is refused as the kubelet refuses it; a runAsUser other than 0 runs", async () => {
    const root = terminatingPod("nonroot", "id -u > /dev/termination-log", "      securityContext: { runAsNonRoot: true }");
    expect(await refused(root)).toEqual({
      reason: "CreateContainerConfigError",
      message: `container has runAsNonRoot and image will run as root (pod: "${root.fullName}_mk-test(${root.uid})", container: termination-message-container)`,
    });
    const user = terminatingPod("nonroot-user", "id -u > /dev/termination-log", "      securityContext: { runAsNonRoot: true, runAsUser: 1234 }");
    expect((await terminated(user)).message).toBe("1234\n");
  }, 30_000);

  test("the pod's safe sysctls are set in its sandbox's namespaces: its containers read them", async () => {
    const spec = terminatingPod("sysctls", "{ cat /proc/sys/kernel/shm_rmid_forced; cat /proc/sys/net/ipv4/ip_local_port_range; } > /dev/termination-log", `  securityContext:
    sysctls: [{ name: kernel.shm_rmid_forced, value: "1" }, { name: net/ipv4/ip_local_port_range, value: "20000 40000" }]`);
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["1", "20000\t40000", ""]);
  }, 30_000);

  test("fsGroup: an emptyDir (and a subPath made in it) belongs to the group, setgid, so a file a container creates there is the group's", async () => {
    const script = "touch /vol/file /sub/file && stat -c '%u %g %a' /vol /vol/file /sub > /dev/termination-log";
    const spec = terminatingPod("fsgroup", script, `      volumeMounts: [{ name: vol, mountPath: /vol }, { name: vol, mountPath: /sub, subPath: made/here }]
  securityContext: { fsGroup: 123 }
  volumes: [{ name: vol, emptyDir: {} }]`);
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["0 123 2777", "0 123 644", "0 123 2777", ""]);
  }, 30_000);

  test("fsGroup: a memory emptyDir (the engine's tmpfs) is the group's too, setgid", async () => {
    const spec = terminatingPod("fsgroup-memory", "touch /vol/file && stat -c '%g' /vol /vol/file > /dev/termination-log", `      volumeMounts: [{ name: vol, mountPath: /vol }]
      securityContext: { runAsUser: 1001 }
  securityContext: { fsGroup: 123 }
  volumes: [{ name: vol, emptyDir: { medium: Memory } }]`);
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["123", "123", ""]);
  }, 30_000);

  test("fsGroup: a subPath into a memory emptyDir is a directory made in its tmpfs, root's and the group's with the volume's mode (3777, as the kubelet makes it); the whole volume shows what was written there", async () => {
    const script = "echo inside > /sub/note && { stat -c '%u %g %a' /sub; cat /vol/made/here/note; grep -c ' /sub tmpfs ' /proc/mounts; } > /dev/termination-log";
    const spec = terminatingPod("fsgroup-memory-subpath", script, `      volumeMounts: [{ name: vol, mountPath: /vol }, { name: vol, mountPath: /sub, subPath: made/here }]
      securityContext: { runAsUser: 1001 }
  securityContext: { fsGroup: 123 }
  volumes: [{ name: vol, emptyDir: { medium: Memory } }]`);
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["0 123 3777", "inside", "1", ""]);
  }, 30_000);

  test("fsGroup: a volume the kubelet fills (downwardAPI here) is the group's and readable by it, so a non-root user in the group reads a 0400 item", async () => {
    const script = "{ stat -L -c '%g %a' /info/name; cat /info/name; echo; } > /dev/termination-log";
    const spec = terminatingPod("fsgroup-filled", script, `      volumeMounts: [{ name: info, mountPath: /info }]
      securityContext: { runAsUser: 1000 }
  securityContext: { fsGroup: 123 }
  volumes: [{ name: info, downwardAPI: { items: [{ path: name, mode: 256, fieldRef: { fieldPath: metadata.name } }] } }]`);
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["123 440", spec.name, ""]);
  }, 30_000);

  test("without a security context the image's user (root) and a writable root, as before", async () => {
    const spec = terminatingPod("plain", "{ id -u; touch /probe && echo writable; } > /dev/termination-log", "");
    const state = await terminated(spec);
    expect(state.message?.split("\n")).toEqual(["0", "writable", ""]);
  }, 30_000);
});
