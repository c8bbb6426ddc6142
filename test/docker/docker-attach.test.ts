/**
 * `kubectl attach` on the docker runtime (real dockerd): containers created with the spec's stdin,
 * stdinOnce and tty, as dockershim created them, and the engine's attach to their main process:
 * stdin in, output out, the terminal's size, and stdinOnce closing the container's stdin after the
 * first attach.
 */
import { afterEach, expect, test } from "bun:test";
import type { AttachRequest, AttachSession } from "../../src/runtime/runtime.ts";
import { waitForLog } from "../runtime-contract.ts";
import { bbContainer, DockerTestEnv, describeDocker, docker, testPod, waitExit } from "./helpers.ts";

/** An attach whose output is collected as text. */
function collecting(request: Omit<AttachRequest, "output">): { request: AttachRequest; text: () => string; streams: Set<string> } {
  let text = "";
  const streams = new Set<string>();
  return {
    request: {
      ...request,
      output: (stream, data) => {
        streams.add(stream);
        text += new TextDecoder().decode(data);
      },
    },
    text: () => text,
    streams,
  };
}

/** Resolves once `session`'s output holds `what` (the engine's stream, no polling of the container). */
async function until(text: () => string, what: string, session: AttachSession, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!text().includes(what)) {
    if (Date.now() > deadline) throw new Error(`no ${JSON.stringify(what)} within ${ms} ms; got ${JSON.stringify(text())}`);
    await Promise.race([session.ended, Bun.sleep(20)]);
  }
}

describeDocker("DockerRuntime attach (real dockerd)", () => {
  let env: DockerTestEnv;
  afterEach(async () => {
    await env.cleanup();
  });

  async function started(name: string, spec: Parameters<typeof bbContainer>[2]) {
    env = new DockerTestEnv();
    const container = bbContainer(name, "", { command: ["sh"], ...spec });
    const pod = testPod(name, [container]);
    const id = await env.start(pod, await env.sandbox(pod), container);
    return id;
  }

  test("the container is created with the spec's stdin, stdinOnce and tty, as dockershim made it", async () => {
    const id = await started("shapes", { stdin: true, stdinOnce: true, tty: true });
    const { Config } = await docker.getContainer(id).inspect();
    expect({ OpenStdin: Config.OpenStdin, StdinOnce: Config.StdinOnce, Tty: Config.Tty }).toEqual({ OpenStdin: true, StdinOnce: true, Tty: true });
    const plain = bbContainer("plain", "sleep 60");
    const pod = testPod("plain", [plain]);
    const inspected = await docker.getContainer(await env.start(pod, await env.sandbox(pod), plain)).inspect();
    expect({ OpenStdin: inspected.Config.OpenStdin, Tty: inspected.Config.Tty }).toEqual({ OpenStdin: false, Tty: false });
  });

  test("stdin, stdinOnce, no terminal: what is written reaches the shell; the end of stdin closes the container's, and the attach lasts until it exits", async () => {
    const id = await started("piped", { stdin: true, stdinOnce: true });
    const out = collecting({ stdin: true, tty: false });
    const session = await env.runtime.attachContainer(id, out.request);
    session.write(new TextEncoder().encode("echo to-out; echo to-err >&2\n"));
    await until(out.text, "to-err", session);
    session.write(new TextEncoder().encode("sleep 0.3; echo after-eof; exit 3\n"));
    session.closeStdin();
    await session.ended;
    expect(out.text()).toContain("after-eof");
    expect(out.streams).toEqual(new Set(["stdout", "stderr"]));
    expect(await waitExit(id)).toBe(3);
  });

  test("with a terminal: output is the terminal's, at the size asked, and resizes reach it", async () => {
    const id = await started("terminal", { stdin: true, stdinOnce: true, tty: true });
    const out = collecting({ stdin: true, tty: true, size: { width: 101, height: 31 } });
    const session = await env.runtime.attachContainer(id, out.request);
    session.write(new TextEncoder().encode("stty size\r"));
    await until(out.text, "31 101", session);
    await session.resize({ width: 90, height: 20 });
    session.write(new TextEncoder().encode("stty size; exit 7\r"));
    await session.ended;
    expect(out.text()).toContain("20 90");
    expect(out.streams).toEqual(new Set(["stdout"]));
    expect(await waitExit(id)).toBe(7);
  });

  test("stdinOnce: a first attach that goes away closes the container's stdin, so a shell reading it ends", async () => {
    const id = await started("once", { stdin: true, stdinOnce: true });
    const detach = new AbortController();
    const out = collecting({ stdin: true, tty: false, signal: detach.signal });
    const session = await env.runtime.attachContainer(id, out.request);
    session.write(new TextEncoder().encode("echo attached\n"));
    await until(out.text, "attached", session);
    detach.abort();
    await session.ended;
    expect(await waitExit(id)).toBe(0);
  });

  test("without stdinOnce, the end of stdin only detaches: the shell keeps reading, and a second attach reaches it", async () => {
    const id = await started("keep", { stdin: true });
    const first = collecting({ stdin: true, tty: false });
    const session = await env.runtime.attachContainer(id, first.request);
    session.closeStdin();
    await session.ended;
    expect((await docker.getContainer(id).inspect()).State.Running).toBe(true);
    const second = collecting({ stdin: true, tty: false });
    const again = await env.runtime.attachContainer(id, second.request);
    again.write(new TextEncoder().encode("echo second; exit 5\n"));
    await again.ended;
    expect(second.text()).toBe("second\n");
    expect(await waitExit(id)).toBe(5);
  });

  test("attach without stdin follows the output from now on, and ends with the container", async () => {
    env = new DockerTestEnv();
    const ticker = bbContainer("ticker", "echo before; until [ -e /tmp/go ]; do sleep 0.05; done; echo after");
    const pod = testPod("ticker", [ticker]);
    const id = await env.start(pod, await env.sandbox(pod), ticker);
    await waitForLog(env.runtime, id, "before");
    const out = collecting({ stdin: false, tty: false });
    const session = await env.runtime.attachContainer(id, out.request);
    expect((await env.runtime.execSync(id, ["touch", "/tmp/go"], 5000)).exitCode).toBe(0);
    await session.ended;
    expect(out.text()).toBe("after\n");
    expect(env.runtime.attachSupport({ stdin: true, tty: true })).toEqual({ kind: "streams" });
  });
});
