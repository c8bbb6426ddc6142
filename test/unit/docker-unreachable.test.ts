/**
 * The docker runtime with no engine behind its socket (dockerd stopped or restarting): errors name
 * the engine and where it was expected, and a start is not mistaken for a failed container start.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Dockerode from "dockerode";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { EngineUnreachableError } from "../../src/runtime/docker/docker-errors.ts";
import { ContainerStartError } from "../../src/runtime/runtime.ts";
import { container, pod } from "../pod-builder.ts";

describe("docker runtime without an engine", () => {
  test("status, list, sandbox, kill, start and logs reject with EngineUnreachableError naming the socket", async () => {
    const dir = mkdtempSync(join(tmpdir(), "minikubelet-no-engine-"));
    const socketPath = join(dir, "docker.sock");
    const runtime = new DockerRuntime({ docker: new Dockerode({ socketPath }), volumeRoot: dir });
    try {
      const web = pod({ name: "web" });
      const sandbox = { id: "sandbox-1", ip: "10.0.0.2", podUid: web.uid };
      const calls: Array<[string, Promise<unknown>]> = [
        ["containerStatus", runtime.containerStatus("abc")],
        ["listContainers", runtime.listContainers()],
        ["runPodSandbox", runtime.runPodSandbox(web)],
        ["killContainer", runtime.killContainer("abc", "SIGTERM")],
        ["startContainer", runtime.startContainer({ pod: web, container: container("web"), kind: "app", attempt: 0, sandbox })],
        ["readLogs", runtime.readLogs("abc", { tail: 2 })],
      ];
      // Each outcome is taken at once: a call that fails while an earlier one is awaited is not an unhandled rejection.
      const outcomes = calls.map(([name, call]) => [name, call.then(() => undefined, (e: unknown) => e)] as const);
      for (const [name, outcome] of outcomes) {
        const error = await outcome;
        expect(error, name).toBeInstanceOf(EngineUnreachableError);
        expect(error, name).not.toBeInstanceOf(ContainerStartError);
        expect((error as Error).message, name).toBe(`docker engine at ${socketPath} is unreachable: connection failed (FailedToOpenSocket)`);
      }
    } finally {
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
