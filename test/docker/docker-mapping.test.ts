/** The pure parts of the docker runtime: create options, mounts, tags, frames. No engine needed. */
import { describe, expect, test } from "bun:test";
import {
  containerCreateOptions,
  emptyDirPath,
  resolveMounts,
  sandboxCreateOptions,
} from "../../src/runtime/docker/docker-container-config.ts";
import { FrameCollector, FrameTextDecoder, parseFrames } from "../../src/runtime/docker/docker-frames.ts";
import { progressLine, withTag } from "../../src/runtime/docker/docker-images.ts";
import { statusFromInspect } from "../../src/runtime/docker/docker-status.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import type Dockerode from "dockerode";
import { bbContainer, testPod } from "./helpers.ts";
import { engineFrame as frame } from "../engine-frames.ts";

describe("create options", () => {
  test("the sandbox uses the pause image, a shareable IPC namespace, and bridge or host network", () => {
    const pod = testPod("web", []);
    const options = sandboxCreateOptions(pod, "registry.k8s.io/pause:3.10");
    expect(options).toMatchObject({
      Image: "registry.k8s.io/pause:3.10",
      Hostname: "web",
      HostConfig: { NetworkMode: "bridge", IpcMode: "shareable" },
    });
    expect(options.Labels?.[LABEL.sandbox]).toBe("true");
    expect(options.name).toStartWith("k8s_POD_web-dockertest_minikubelet-test_");
    const host = sandboxCreateOptions({ ...pod, hostNetwork: true }, "pause");
    expect(host.HostConfig?.NetworkMode).toBe("host");
    expect(host.Hostname).toBeUndefined();
  });

  test.each([
    ["command and args", ["/bin/server"], ["--port", "80"], ["/bin/server"], ["--port", "80"]],
    ["command only: the image's CMD is dropped by the engine", ["/bin/server"], [], ["/bin/server"], undefined],
    ["args only: the image's ENTRYPOINT stays", [], ["--port", "80"], undefined, ["--port", "80"]],
    ["neither: both from the image", [], [], undefined, undefined],
  ])("%s", (_case, command, args, entrypoint, cmd) => {
    const container = bbContainer("app", "", { command, args });
    const pod = testPod("cmd", [container]);
    const options = containerCreateOptions({ pod, container, kind: "app", attempt: 0, sandbox: { id: "sb1", ip: "", podUid: pod.uid } }, []);
    expect(options.Entrypoint).toEqual(entrypoint);
    expect(options.Cmd).toEqual(cmd);
  });

  test("a container joins the sandbox's network and IPC, and its PID namespace when shared", () => {
    const container = bbContainer("app", "true", { env: [{ name: "A", value: "1=2" }], workingDir: "/w" });
    const pod = testPod("join", [container]);
    const config = { pod, container, kind: "app" as const, attempt: 3, sandbox: { id: "sb1", ip: "", podUid: pod.uid } };
    const options = containerCreateOptions(config, [{ source: "/h/d", target: "/d", readOnly: true }]);
    expect(options.HostConfig).toMatchObject({ NetworkMode: "container:sb1", IpcMode: "container:sb1", Binds: ["/h/d:/d:ro"] });
    expect(options.HostConfig?.PidMode).toBeUndefined();
    expect(options.Env).toEqual(["A=1=2"]);
    expect(options.WorkingDir).toBe("/w");
    expect(options.Labels?.[LABEL.attempt]).toBe("3");
    const shared = containerCreateOptions({ ...config, pod: { ...pod, shareProcessNamespace: true } }, []);
    expect(shared.HostConfig?.PidMode).toBe("container:sb1");
  });

  test("the engine's json-file driver gets the log limits: the kubelet's by default, else the agent's flags", () => {
    const container = bbContainer("app", "true");
    const pod = testPod("logs", [container]);
    const config = { pod, container, kind: "app" as const, attempt: 0, sandbox: { id: "sb1", ip: "", podUid: pod.uid } };
    expect(containerCreateOptions(config, []).HostConfig?.LogConfig).toEqual({ Type: "json-file", Config: { "max-size": "10485760", "max-file": "5" } });
    const small = containerCreateOptions(config, [], undefined, { maxBytes: 65536, maxFiles: 3 });
    expect(small.HostConfig?.LogConfig).toEqual({ Type: "json-file", Config: { "max-size": "65536", "max-file": "3" } });
  });

  test("the container's resources and the node's pids limit become the engine's cgroup settings", () => {
    const container = bbContainer("app", "true", { resources: { limits: { cpu: "1", memory: "64Mi" }, requests: { cpu: "1", memory: "64Mi" } } });
    const pod = testPod("limits", [container]);
    const config = { pod, container, kind: "app" as const, attempt: 0, sandbox: { id: "sb1", ip: "", podUid: pod.uid } };
    const options = containerCreateOptions(config, [], undefined, undefined, { podMaxPids: 100 });
    expect(options.HostConfig).toMatchObject({ Memory: 67108864, MemorySwap: 67108864, CpuShares: 1024, CpuPeriod: 100000, CpuQuota: 100000, PidsLimit: 100 });
  });

  test("mounts resolve emptyDir under the volume root and hostPath as written, subPath appended", () => {
    const container = bbContainer("app", "true", {
      volumeMounts: [
        { name: "cache", mountPath: "/cache", readOnly: false },
        { name: "host", mountPath: "/etc/app", readOnly: true, subPath: "conf" },
      ],
    });
    const pod = testPod("mounts", [container], {
      volumes: [
        { name: "cache", type: "emptyDir" },
        { name: "host", type: "hostPath", path: "/srv/app", hostPathType: "Directory" },
      ],
    });
    expect(resolveMounts(pod, container, "/var/lib/minikubelet/pods")).toEqual([
      { source: emptyDirPath("/var/lib/minikubelet/pods", pod.uid, "cache"), target: "/cache", readOnly: false, create: "directory", emptyDir: emptyDirPath("/var/lib/minikubelet/pods", pod.uid, "cache") },
      { source: "/srv/app/conf", target: "/etc/app", readOnly: true, create: "directory" },
    ]);
    expect(emptyDirPath("/root", "abc", "cache")).toBe("/root/abc/cache");
    expect(() => emptyDirPath("/root", "../etc", "x")).toThrow(/cannot name a volume directory/);
  });

  test("a mount naming no volume is an error naming the container, the field and the value", () => {
    const container = bbContainer("app", "true", { volumeMounts: [{ name: "nope", mountPath: "/x", readOnly: false }] });
    expect(() => resolveMounts(testPod("bad", [container]), container, "/r")).toThrow(
      'container app: volumeMounts[0].name "nope" names no volume of pod minikubelet-test/bad-dockertest',
    );
  });
});

describe("images", () => {
  test.each([
    ["busybox", "busybox:latest"],
    ["busybox:1.36", "busybox:1.36"],
    ["127.0.0.1:5000/team/app", "127.0.0.1:5000/team/app:latest"],
    ["127.0.0.1:5000/team/app:2", "127.0.0.1:5000/team/app:2"],
    ["app@sha256:abc", "app@sha256:abc"],
  ])("withTag(%s) = %s", (image, expected) => {
    expect(withTag(image)).toBe(expected);
  });

  test("progress lines read like the docker CLI's", () => {
    expect(progressLine({ status: "Downloading", id: "3f2a", progress: "[=>  ] 1MB/3MB" })).toBe("Downloading 3f2a: [=>  ] 1MB/3MB");
    expect(progressLine({ status: "Status: Image is up to date for x" })).toBe("Status: Image is up to date for x");
    expect(progressLine({})).toBeUndefined();
  });
});

describe("multiplexed frames", () => {
  test("frames split across chunks are joined; stdout and stderr keep arrival order", () => {
    const all = Buffer.concat([frame(1, "out\n"), frame(2, "err\n"), frame(1, "end\n")]);
    const collector = new FrameCollector();
    for (let i = 0; i < all.length; i += 5) collector.push(all.subarray(i, i + 5));
    expect(collector.text()).toBe("out\nerr\nend\n");
  });

  test("an incomplete trailing frame is kept for the next chunk", () => {
    const { frames, rest } = parseFrames(frame(1, "hello").subarray(0, 10));
    expect(frames).toEqual([]);
    expect(rest.length).toBe(10);
  });

  test("a live stream decodes chunk by chunk, holding back a split frame or a split UTF-8 character", () => {
    const all = Buffer.concat([frame(1, "café\n"), frame(2, "naïve\n")]);
    const decoder = new FrameTextDecoder();
    const pieces: string[] = [];
    for (let i = 0; i < all.length; i += 3) pieces.push(decoder.write(all.subarray(i, i + 3)));
    expect(pieces.join("")).toBe("café\nnaïve\n");
    expect(pieces.every((piece) => !piece.includes("\ufffd"))).toBe(true);
  });

  test("a raw (TTY) stream stays raw after its first chunk, even when a later chunk starts like a header", () => {
    const decoder = new FrameTextDecoder();
    expect(decoder.write(Buffer.from("$ ls\n"))).toBe("$ ls\n");
    const lookalike = Buffer.from([1, 0, 0, 0, 0, 0, 0, 2, 0x68, 0x69]);
    expect(decoder.write(lookalike)).toBe(lookalike.toString("utf8"));
  });

  test("output beyond the limit is cut and marked truncated", () => {
    const collector = new FrameCollector(6);
    collector.push(Buffer.concat([frame(1, "abcd"), frame(2, "efgh")]));
    expect(collector.text()).toBe("abcdef");
    expect(collector.truncated).toBe(true);
  });
});

describe("status from inspect", () => {
  const inspect = (state: Partial<Dockerode.ContainerInspectInfo["State"]>) =>
    ({
      Id: "c1",
      State: { Status: "exited", Running: false, Pid: 0, ExitCode: 0, OOMKilled: false, StartedAt: "0001-01-01T00:00:00Z", FinishedAt: "0001-01-01T00:00:00Z", ...state },
    }) as unknown as Dockerode.ContainerInspectInfo;

  test("an OOM-killed container reports reason OOMKilled and its exit code", () => {
    const status = statusFromInspect(
      inspect({ ExitCode: 137, OOMKilled: true, StartedAt: "2026-01-01T12:00:00.5Z", FinishedAt: "2026-01-01T12:00:03Z" }),
    );
    expect(status).toEqual({
      id: "c1",
      state: "exited",
      exitCode: 137,
      reason: "OOMKilled",
      startedAt: Date.UTC(2026, 0, 1, 12, 0, 0, 500),
      finishedAt: Date.UTC(2026, 0, 1, 12, 0, 3),
    });
  });

  test("a created container has no times; a running one has its pid", () => {
    expect(statusFromInspect(inspect({ Status: "created" }))).toEqual({ id: "c1", state: "created" });
    expect(statusFromInspect(inspect({ Status: "running", Running: true, Pid: 42, StartedAt: "2026-01-01T12:00:00Z" }))).toEqual({
      id: "c1",
      state: "running",
      pid: 42,
      startedAt: Date.UTC(2026, 0, 1, 12),
    });
  });
});
