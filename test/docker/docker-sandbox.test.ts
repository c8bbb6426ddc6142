/**
 * How runPodSandbox reaches a running pause container (issue 15): the usual case, no sandbox yet
 * and the pause image present, is a create, a start and an inspect for the pod IP, with no list
 * of the engine's containers and no image check first; the rarer cases (a running sandbox to reuse,
 * a dead one to replace, a missing pause image, a name another database holds) take the longer way.
 */
import { afterEach, expect, test } from "bun:test";
import Dockerode from "dockerode";
import { useFetchTransport } from "../../src/runtime/docker/docker-transport.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { describeDocker, docker, DockerTestEnv, REGISTRY_BUSYBOX, testPod } from "./helpers.ts";

/** An engine client that records each request it sends as "METHOD /path" (ids shortened to :id). */
function recordingClient(): { docker: Dockerode; calls: string[] } {
  const client = useFetchTransport(new Dockerode());
  const modem = (client as unknown as { modem: { buildRequest: (...args: unknown[]) => void } }).modem;
  const send = modem.buildRequest.bind(modem);
  const calls: string[] = [];
  modem.buildRequest = (request: unknown, ...rest: unknown[]) => {
    const { method, path } = request as { method: string; path: string };
    calls.push(`${method} ${path.split("?")[0]!.replace(/[0-9a-f]{64}/, ":id")}`);
    send(request, ...rest);
  };
  return { docker: client, calls };
}

const envs: DockerTestEnv[] = [];
afterEach(async () => {
  for (const env of envs.splice(0)) await env.cleanup();
});

function newEnv(options: ConstructorParameters<typeof DockerTestEnv>[0] = {}): DockerTestEnv {
  const env = new DockerTestEnv(options);
  envs.push(env);
  return env;
}

describeDocker("DockerRuntime sandboxes (real dockerd)", () => {
  test("a new sandbox is a create, a start and an inspect: no list and no image check before", async () => {
    const recorded = recordingClient();
    const env = newEnv({ docker: recorded.docker });
    const sandbox = await env.sandbox(testPod("calls", []));
    expect(recorded.calls).toEqual(["POST /containers/create", "POST /containers/:id/start", "GET /containers/:id/json"]);
    expect((await docker.getContainer(sandbox.id).inspect()).State.Running).toBe(true);
  });

  test("a hostNetwork sandbox needs no inspect: its IP is the host's", async () => {
    const recorded = recordingClient();
    const env = newEnv({ docker: recorded.docker });
    const sandbox = await env.sandbox(testPod("hostcalls", [], { hostNetwork: true }));
    expect(sandbox.ip).toBe("127.0.0.1");
    expect(recorded.calls).toEqual(["POST /containers/create", "POST /containers/:id/start"]);
  });

  test("a running sandbox is returned as it is; a dead one is replaced by a new one", async () => {
    const env = newEnv();
    const pod = testPod("redo", []);
    const first = await env.sandbox(pod);
    expect(await env.runtime.runPodSandbox(pod)).toEqual(first);

    await docker.getContainer(first.id).kill();
    await docker.getContainer(first.id).wait();
    const second = await env.runtime.runPodSandbox(pod);
    expect(second.id).not.toBe(first.id);
    expect(second.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect((await docker.getContainer(second.id).inspect()).State.Running).toBe(true);
    const dead = await docker.getContainer(first.id).inspect().catch((error: { statusCode?: number }) => error.statusCode);
    expect(dead).toBe(404);
  });

  test("the sandbox name held by another database's container is an error that leaves that container alone", async () => {
    const ours = newEnv({ owner: "c".repeat(32) });
    const theirs = newEnv({ owner: "d".repeat(32) });
    const pod = testPod("taken", []);
    const sandbox = await ours.sandbox(pod);
    await expect(theirs.runtime.runPodSandbox(pod)).rejects.toThrow("another agent's database");
    const info = await docker.getContainer(sandbox.id).inspect();
    expect(info.State.Running).toBe(true);
    expect(info.Config.Labels[LABEL.database]).toBe("c".repeat(32));
  });
});

describeDocker(
  "DockerRuntime sandboxes with a missing pause image (real dockerd, registry on 127.0.0.1:5000)",
  () => {
    test("a pause image the engine lacks is pulled, then the sandbox is created", async () => {
      // Untag only: the layers stay, shared with minikubelet-test/busybox:1.
      await docker.getImage(REGISTRY_BUSYBOX).remove({ noprune: true }).catch(() => undefined);
      const env = newEnv({ pauseImage: REGISTRY_BUSYBOX });
      const sandbox = await env.sandbox(testPod("pull", []));
      expect((await docker.getContainer(sandbox.id).inspect()).Config.Image).toBe(REGISTRY_BUSYBOX);
      expect((await docker.getImage(REGISTRY_BUSYBOX).inspect()).Id).toMatch(/^sha256:/);
    });
  },
  { registry: true },
);
