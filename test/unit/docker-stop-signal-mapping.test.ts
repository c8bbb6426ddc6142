/** The docker mapping of KEP-4960 and memory emptyDirs, pure: create options, mounts, the inspect's stop signal. */
import { describe, expect, test } from "bun:test";
import type Dockerode from "dockerode";
import { containerCreateOptions, resolveMounts } from "../../src/runtime/docker/docker-container-config.ts";
import { statusFromInspect } from "../../src/runtime/docker/docker-status.ts";
import { memorySubPathSource } from "../../src/runtime/docker/docker-memory-volumes.ts";
import { parseMountinfo } from "../../src/host/mountinfo.ts";
import { container, pod } from "../pod-builder.ts";

const running = (config: Record<string, unknown>) =>
  ({
    Id: "c1",
    Config: config,
    State: { Status: "running", Running: true, Pid: 7, ExitCode: 0, OOMKilled: false, StartedAt: "2026-01-01T12:00:00Z", FinishedAt: "0001-01-01T00:00:00Z" },
    HostConfig: {},
  }) as unknown as Dockerode.ContainerInspectInfo;

describe("docker stop signals", () => {
  test("the spec's stop signal is the container's StopSignal; without one the image's stays", () => {
    const p = pod();
    const sandbox = { id: "sb1", ip: "", podUid: p.uid };
    expect(containerCreateOptions({ pod: p, container: container("web", { stopSignal: "SIGRTMIN+2" }), kind: "app", attempt: 0, sandbox }, []).StopSignal).toBe("SIGRTMIN+2");
    expect(containerCreateOptions({ pod: p, container: container("web"), kind: "app", attempt: 0, sandbox }, [])).not.toHaveProperty("StopSignal");
  });

  test("a running container reports the engine's StopSignal in any spelling an image uses; none when it names none", () => {
    expect(statusFromInspect(running({ StopSignal: "USR1" })).stopSignal).toBe("SIGUSR1");
    expect(statusFromInspect(running({ StopSignal: "3" })).stopSignal).toBe("SIGQUIT");
    expect(statusFromInspect(running({})).stopSignal).toBeUndefined();
  });
});

describe("docker memory emptyDir mounts", () => {
  const p = pod();
  p.volumes = [{ name: "mem", type: "emptyDir", medium: "Memory", sizeLimit: "1Mi", sizeLimitBytes: 1048576 }];

  test("mounts the pod's engine volume by name, not a host directory", () => {
    const c = container("web", { volumeMounts: [{ name: "mem", mountPath: "/mem", readOnly: false }] });
    expect(resolveMounts(p, c, "/vols")).toEqual([{ source: `minikubelet-${p.uid}-mem`, target: "/mem", readOnly: false }]);
  });

  test("a subPath into it is left to be found in the volume's tmpfs when the container is created (a named volume mounts whole)", () => {
    const c = container("web", { volumeMounts: [{ name: "mem", mountPath: "/mem", readOnly: false, subPath: "x/y" }] });
    expect(resolveMounts(p, c, "/vols")).toEqual([{ source: "", target: "/mem", readOnly: false, memorySubPath: { volume: `minikubelet-${p.uid}-mem`, subPath: "x/y" } }]);
  });
});

describe("a subPath into a memory emptyDir, found on the host", () => {
  const engineWith = (mountpoint: string) => ({ getVolume: () => ({ inspect: async () => ({ Mountpoint: mountpoint }) }) }) as unknown as Dockerode;
  const mounts = parseMountinfo(
    [
      "36 25 0:32 / /var/lib/docker/volumes/minikubelet-u1-mem/_data rw,relatime shared:20 - tmpfs tmpfs rw,size=1024k,mode=1777",
      "37 25 8:1 / /var/lib/docker/volumes/minikubelet-u1-disk/_data rw,relatime shared:1 - ext4 /dev/sda1 rw",
    ].join("\n"),
  );

  test("is a directory in the volume's tmpfs where the engine mounted it", async () => {
    expect(await memorySubPathSource(engineWith("/var/lib/docker/volumes/minikubelet-u1-mem/_data"), "minikubelet-u1-mem", "a/b", mounts)).toEqual({
      tmpfs: "/var/lib/docker/volumes/minikubelet-u1-mem/_data",
      source: "/var/lib/docker/volumes/minikubelet-u1-mem/_data/a/b",
    });
  });

  test("is refused, naming why, where this agent does not see the tmpfs mounted (another host's engine, or the disk below it)", async () => {
    const refusal = (mountpoint: string) => memorySubPathSource(engineWith(mountpoint), "minikubelet-u1-mem", "a", mounts).then(() => "bound", (error: Error) => error.message);
    expect(await refusal("/var/lib/docker/volumes/minikubelet-u1-disk/_data")).toBe(
      'subPath "a" into memory emptyDir volume minikubelet-u1-mem: its tmpfs is not mounted at /var/lib/docker/volumes/minikubelet-u1-disk/_data where this agent can reach it (the agent must run as root beside the engine)',
    );
    expect(await memorySubPathSource(engineWith("/elsewhere"), "minikubelet-u1-mem", "a", undefined).then(() => "bound", () => "refused")).toBe("refused");
  });
});
