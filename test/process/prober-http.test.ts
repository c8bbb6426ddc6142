/**
 * httpGet and tcpSocket probes against real servers on 127.0.0.1 started here on port 0.
 * Headers are asserted on the server side. Timeouts use a FakeClock where the test can hold the
 * server; one test uses the real clock with a 200 ms timeout.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { type Clock, realClock } from "../../src/clock.ts";
import type { HttpGetAction, Probe, ProbeHandler } from "../../src/manifest/types.ts";
import { Prober, type ProbeResult } from "../../src/prober/prober.ts";
import { KUBE_MINOR_VERSION } from "../../src/version.ts";
import { FakeClock } from "../fake-clock.ts";

interface Seen {
  path: string;
  headers: http.IncomingHttpHeaders;
}

const seen: Seen[] = [];
const held: http.ServerResponse[] = [];
let server: http.Server;
let port = 0;
let closedPort = 0;

function listen(s: net.Server): Promise<number> {
  return new Promise((resolve) => s.listen(0, "127.0.0.1", () => resolve((s.address() as net.AddressInfo).port)));
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    seen.push({ path: url.pathname + url.search, headers: req.headers });
    const status = url.pathname.match(/^\/status\/(\d+)$/)?.[1];
    if (status) {
      res.writeHead(Number(status), { "Content-Type": "text/plain" });
      return res.end(`body of ${status}`);
    }
    switch (url.pathname) {
      case "/hang":
        held.push(res);
        return;
      case "/hang-body":
        res.writeHead(200);
        res.write("partial");
        held.push(res);
        return;
      case "/same-host":
        res.writeHead(302, { Location: "/status/200" });
        return res.end();
      case "/loop":
        res.writeHead(302, { Location: "/loop" });
        return res.end();
      case "/other-host":
        res.writeHead(302, { Location: `http://localhost:${port}/status/200` });
        return res.end("moved");
      case "/big":
        res.writeHead(200);
        return res.end("y".repeat(1024 * 1024));
      default:
        res.writeHead(200);
        return res.end("ok");
    }
  });
  port = await listen(server);
  const closed = net.createServer();
  closedPort = await listen(closed);
  await new Promise((resolve) => closed.close(resolve));
});

afterAll(async () => {
  for (const res of held) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function httpGet(path: string, overrides: Partial<HttpGetAction> = {}): ProbeHandler {
  return { type: "httpGet", scheme: "HTTP", host: "", path, port, httpHeaders: [], ...overrides };
}

function probe(handler: ProbeHandler, timeoutSeconds = 1): Probe {
  return { handler, initialDelaySeconds: 0, timeoutSeconds, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
}

const noExec = () => Promise.reject(new Error("no exec in this test"));
const target = { containerId: "c1", podIP: "127.0.0.1", kind: "readiness" as const };

function run(handler: ProbeHandler, clock: Clock = new FakeClock(), timeoutSeconds = 1): Promise<ProbeResult> {
  return new Prober({ clock, exec: noExec }).probe(probe(handler, timeoutSeconds), target);
}

/** The requests the server saw for `path`, after `from` (an index into `seen`). */
function requestsFor(path: string, from: number): Seen[] {
  return seen.slice(from).filter((s) => s.path === path);
}

describe("httpGet status codes", () => {
  const cases: Array<{ status: number; want: ProbeResult }> = [
    { status: 200, want: { ok: true, message: "body of 200" } },
    { status: 204, want: { ok: true, message: "" } },
    { status: 399, want: { ok: true, warning: true, message: "Probe terminated redirects, Response body: body of 399" } },
    { status: 400, want: { ok: false, message: "HTTP probe failed with statuscode: 400" } },
    { status: 503, want: { ok: false, message: "HTTP probe failed with statuscode: 503" } },
  ];
  for (const c of cases) {
    test(`status ${c.status}`, async () => {
      expect(await run(httpGet(`/status/${c.status}`))).toEqual(c.want);
    });
  }
});

describe("httpGet request", () => {
  test("sends the kubelet's User-Agent and Accept, and every httpHeader, to the pod IP", async () => {
    const from = seen.length;
    const result = await run(
      httpGet("/healthz?x=1", {
        httpHeaders: [
          { name: "X-Custom", value: "one" },
          { name: "X-Custom", value: "two" },
          { name: "Authorization", value: "Bearer t" },
        ],
      }),
    );
    expect(result.ok).toBe(true);
    const [request] = requestsFor("/healthz?x=1", from);
    expect(request?.headers["user-agent"]).toBe(`kube-probe/${KUBE_MINOR_VERSION}`);
    expect(request?.headers["accept"]).toBe("*/*");
    expect(request?.headers["authorization"]).toBe("Bearer t");
    expect(request?.headers["host"]).toBe(`127.0.0.1:${port}`);
    // Repeated names arrive as one list (two header lines or one comma-joined line are the same
    // header to HTTP; Bun's client sends the latter).
    expect(request?.headers["x-custom"]).toBe("one, two");
  });

  test("a Host header sets the request's Host; a User-Agent header replaces kube-probe", async () => {
    const from = seen.length;
    await run(
      httpGet("/vhost", {
        httpHeaders: [
          { name: "Host", value: "example.test" },
          { name: "User-Agent", value: "custom-agent/1" },
        ],
      }),
    );
    const [request] = requestsFor("/vhost", from);
    expect(request?.headers["host"]).toBe("example.test");
    expect(request?.headers["user-agent"]).toBe("custom-agent/1");
  });

  test("a redirect to the same host is followed", async () => {
    const from = seen.length;
    expect(await run(httpGet("/same-host"))).toEqual({ ok: true, message: "body of 200" });
    expect(requestsFor("/status/200", from).length).toBe(1);
  });

  test("a redirect to another host is not followed and succeeds with a warning", async () => {
    const from = seen.length;
    expect(await run(httpGet("/other-host"))).toEqual({
      ok: true,
      warning: true,
      message: "Probe terminated redirects, Response body: moved",
    });
    expect(requestsFor("/status/200", from).length).toBe(0);
  });

  test("a redirect loop stops after 10 redirects", async () => {
    const from = seen.length;
    expect(await run(httpGet("/loop"))).toEqual({
      ok: false,
      message: `Get "http://127.0.0.1:${port}/loop": stopped after 10 redirects`,
    });
    expect(requestsFor("/loop", from).length).toBe(11);
  });

  test("a large body is read only up to 10 KiB and the status decides", async () => {
    const result = await run(httpGet("/big"));
    expect(result).toEqual({ ok: true, message: "y".repeat(10 * 1024) });
  });

  test("connection refused on a closed port", async () => {
    expect(await run(httpGet("/healthz", { port: closedPort }))).toEqual({
      ok: false,
      message: `Get "http://127.0.0.1:${closedPort}/healthz": dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
  });
});

describe("httpGet timeouts", () => {
  test("a hung server times out on the clock while another probe answers on time", async () => {
    const clock = new FakeClock();
    const prober = new Prober({ clock, exec: noExec });
    let hungResult: ProbeResult | undefined;
    const hung = prober.probe(probe(httpGet("/hang"), 2), target).then((r) => (hungResult = r));
    const fast = await prober.probe(probe(httpGet("/status/200"), 2), target);
    expect(fast.ok).toBe(true);
    expect(hungResult).toBeUndefined();

    clock.step(2000);
    await hung;
    expect(hungResult).toEqual({
      ok: false,
      message: `Get "http://127.0.0.1:${port}/hang": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
    });
  });

  test("a body that stalls fails at the timeout (real clock, 200 ms)", async () => {
    // The headers are flushed at once, so the deadline finds the prober reading the body.
    expect(await run(httpGet("/hang-body"), realClock, 0.2)).toEqual({
      ok: false,
      message: "context deadline exceeded (Client.Timeout or context cancellation while reading body)",
    });
  });

  test("with the real clock, a hung server costs its timeout and no more", async () => {
    const order: string[] = [];
    const hung = run(httpGet("/hang"), realClock, 0.2).then((r) => {
      order.push("hung");
      return r;
    });
    const fast = run(httpGet("/status/200"), realClock, 0.2).then((r) => {
      order.push("fast");
      return r;
    });
    const [hungResult, fastResult] = await Promise.all([hung, fast]);
    expect(fastResult.ok).toBe(true);
    expect(hungResult.ok).toBe(false);
    expect(hungResult.message).toContain("Client.Timeout exceeded while awaiting headers");
    expect(order).toEqual(["fast", "hung"]);
  });
});

describe("tcpSocket probes", () => {
  test("an open port succeeds", async () => {
    expect(await run({ type: "tcpSocket", host: "", port })).toEqual({ ok: true, message: "" });
  });

  test("a closed port is refused in Go's words", async () => {
    expect(await run({ type: "tcpSocket", host: "127.0.0.1", port: closedPort })).toEqual({
      ok: false,
      message: `dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
  });
});

describe("httpGet over HTTPS", () => {
  let tlsServer: https.Server;
  let tlsPort = 0;
  let dir = "";

  beforeAll(async () => {
    // A self-signed certificate no client would verify: the kubelet's prober skips verification.
    dir = mkdtempSync(join(tmpdir(), "prober-tls-"));
    const openssl = Bun.spawnSync([
      "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=pod.invalid",
      "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"),
    ], { stdout: "ignore", stderr: "pipe" });
    if (openssl.exitCode !== 0) throw new Error(`openssl req failed: ${openssl.stderr.toString()}`);
    tlsServer = https.createServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (req, res) => {
        res.writeHead(req.url === "/healthz" ? 200 : 503);
        res.end(req.headers["user-agent"]);
      },
    );
    tlsPort = await listen(tlsServer);
  });

  afterAll(async () => {
    tlsServer.closeAllConnections();
    await new Promise((resolve) => tlsServer.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  test("a self-signed certificate is accepted and the status decides", async () => {
    expect(await run(httpGet("/healthz", { scheme: "HTTPS", port: tlsPort }))).toEqual({
      ok: true,
      message: `kube-probe/${KUBE_MINOR_VERSION}`,
    });
    expect(await run(httpGet("/down", { scheme: "HTTPS", port: tlsPort }))).toEqual({
      ok: false,
      message: "HTTP probe failed with statuscode: 503",
    });
  });
});
