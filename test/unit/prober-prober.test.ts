import { describe, expect, test } from "bun:test";
import type { HttpGetAction, Probe, ProbeHandler } from "../../src/manifest/types.ts";
import { probeHeaders, probeUrl } from "../../src/prober/http-probe.ts";
import { Prober, type ExecFn } from "../../src/prober/prober.ts";
import type { ExecResult } from "../../src/runtime/runtime.ts";
import { KUBE_MINOR_VERSION } from "../../src/version.ts";
import { FakeClock } from "../fake-clock.ts";

function probe(handler: ProbeHandler, timeoutSeconds = 1): Probe {
  return { handler, initialDelaySeconds: 0, timeoutSeconds, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
}

const target = { containerId: "c1", podIP: "127.0.0.1", kind: "liveness" as const };

/** An exec that answers from a script and records what it was asked. */
function scriptedExec(answer: (call: number) => Promise<ExecResult>) {
  const calls: Array<{ containerId: string; command: string[]; timeoutMs: number }> = [];
  const exec: ExecFn = (containerId, command, timeoutMs) => {
    calls.push({ containerId, command, timeoutMs });
    return answer(calls.length);
  };
  return { exec, calls };
}

describe("exec probes", () => {
  const cases: Array<{ name: string; result: ExecResult; ok: boolean; message: string }> = [
    { name: "exit 0 is success", result: { exitCode: 0, output: "fine\n", timedOut: false }, ok: true, message: "fine" },
    {
      name: "a non-zero exit fails with the command's output",
      result: { exitCode: 1, output: "cat: can't open '/tmp/healthy': No such file or directory\n", timedOut: false },
      ok: false,
      message: "cat: can't open '/tmp/healthy': No such file or directory",
    },
    { name: "a silent failure has an empty message", result: { exitCode: 2, output: "", timedOut: false }, ok: false, message: "" },
    {
      name: "a runtime-reported timeout fails in the kubelet's words",
      result: { exitCode: 137, output: "", timedOut: true },
      ok: false,
      message: 'command "sh -c sleep 5" timed out',
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { exec, calls } = scriptedExec(async () => c.result);
      const prober = new Prober({ clock: new FakeClock(), exec });
      const result = await prober.probe(probe({ type: "exec", command: ["sh", "-c", "sleep 5"] }, 3), target);
      expect(result).toEqual({ ok: c.ok, message: c.message });
      expect(calls).toEqual([{ containerId: "c1", command: ["sh", "-c", "sleep 5"], timeoutMs: 3000 }]);
    });
  }

  test("an exec the runtime never answers times out on the clock", async () => {
    const clock = new FakeClock();
    const { exec } = scriptedExec(() => new Promise(() => {}));
    const prober = new Prober({ clock, exec });
    let settled: unknown;
    const pending = prober.probe(probe({ type: "exec", command: ["sh", "-c", "sleep 5"] }, 2), target).then((r) => (settled = r));
    await Promise.resolve();
    clock.step(1999);
    await Promise.resolve();
    expect(settled).toBeUndefined();
    clock.step(1);
    expect(await pending).toEqual({ ok: false, message: 'command "sh -c sleep 5" timed out' });
    expect(clock.pendingTimers()).toBe(0);
  });

  test("output past 10 KiB is cut, as the kubelet reads no more", async () => {
    const { exec } = scriptedExec(async () => ({ exitCode: 1, output: "x".repeat(20_000), timedOut: false }));
    const result = await new Prober({ clock: new FakeClock(), exec }).probe(probe({ type: "exec", command: ["x"] }), target);
    expect(result.message.length).toBe(10 * 1024);
  });

  test("an exec that cannot run is an errored probe, retried up to 3 times", async () => {
    const { exec, calls } = scriptedExec(async () => {
      throw new Error("container c1 not found");
    });
    const clock = new FakeClock();
    const result = await new Prober({ clock, exec }).probe(probe({ type: "exec", command: ["true"] }), target);
    expect(result).toEqual({ ok: false, errored: true, message: "container c1 not found" });
    expect(calls.length).toBe(3);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("an errored attempt followed by a real answer uses the answer", async () => {
    const { exec, calls } = scriptedExec(async (call) => {
      if (call === 1) throw new Error("transient");
      return { exitCode: 0, output: "", timedOut: false };
    });
    const result = await new Prober({ clock: new FakeClock(), exec }).probe(probe({ type: "exec", command: ["true"] }), target);
    expect(result).toEqual({ ok: true, message: "" });
    expect(calls.length).toBe(2);
  });
});

describe("tcpSocket probes on the clock", () => {
  test("a connect not finished by the timeout fails with Go's i/o timeout", async () => {
    const clock = new FakeClock();
    const prober = new Prober({ clock, exec: () => Promise.reject(new Error("unused")) });
    const pending = prober.probe(probe({ type: "tcpSocket", host: "", port: 9 }), { ...target, podIP: "127.0.0.1" });
    // The connect is asynchronous: stepping now expires the timeout before any answer arrives.
    clock.step(1000);
    expect(await pending).toEqual({ ok: false, message: "dial tcp 127.0.0.1:9: i/o timeout" });
  });
});

describe("httpGet request shape", () => {
  function action(overrides: Partial<HttpGetAction> = {}): HttpGetAction {
    return { type: "httpGet", scheme: "HTTP", host: "", path: "/healthz", port: 8080, httpHeaders: [], ...overrides };
  }

  test("the URL uses the pod IP unless a host is set, and the lower-cased scheme", () => {
    expect(probeUrl(action(), "10.0.0.7").href).toBe("http://10.0.0.7:8080/healthz");
    expect(probeUrl(action({ host: "127.0.0.2", scheme: "HTTPS", path: "/a?b=c" }), "10.0.0.7").href).toBe("https://127.0.0.2:8080/a?b=c");
    expect(probeUrl(action({ host: "::1" }), "x").href).toBe("http://[::1]:8080/healthz");
  });

  test("User-Agent and Accept default to the kubelet's, unless the probe sets them", () => {
    expect(probeHeaders(action())).toEqual({ "User-Agent": `kube-probe/${KUBE_MINOR_VERSION}`, Accept: "*/*", Connection: "close" });
    const custom = probeHeaders(
      action({
        httpHeaders: [
          { name: "user-agent", value: "mine" },
          { name: "Accept", value: "" },
          { name: "X-Probe", value: "a" },
          { name: "x-probe", value: "b" },
        ],
      }),
    );
    expect(custom).toEqual({ "user-agent": "mine", "X-Probe": ["a", "b"], Connection: "close" });
  });
});
