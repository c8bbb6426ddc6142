/** The docker mapping of KEP-4960 and memory emptyDirs, pure: create options, mounts, the inspect's stop signal. */
import { describe, expect, test } from "bun:test";
import type Dockerode from "dockerode";
import { containerCreateOptions, resolveMounts } from "../../src/runtime/docker/docker-container-config.ts";
import { statusFromInspect } from "../../src/runtime/docker/docker-status.ts";
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

  test("a subPath into it is refused (a named volume mounts whole)", () => {
    const c = container("web", { volumeMounts: [{ name: "mem", mountPath: "/mem", readOnly: false, subPath: "x" }] });
    expect(() => resolveMounts(p, c, "/vols")).toThrow('container web: volumeMounts[0].subPath into memory emptyDir "mem" is not supported on docker');
  });
});
