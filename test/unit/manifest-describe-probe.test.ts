import { describe, expect, test } from "bun:test";
import { describeHandler, describeProbe } from "../../src/manifest/describe-probe.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { goDuration } from "../../src/printers/go-duration.ts";
import type { Probe } from "../../src/manifest/types.ts";

/** The probe as the validator fills it in, so defaults come from the same place as at run time. */
function probeFrom(raw: Record<string, unknown>, ports: unknown[] = [{ name: "http", containerPort: 8080 }]): Probe {
  const pod = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { containers: [{ name: "c", image: "busybox", ports, readinessProbe: raw }] },
    },
    { file: "p.yaml", source: "/p.yaml", node: "" },
  );
  return pod.containers[0]!.readinessProbe!;
}

// Expected lines are kubectl describe pod output for the same probes.
const cases: [name: string, probe: Record<string, unknown>, line: string][] = [
  [
    "named http port with a path (the seed's web pod)",
    { httpGet: { path: "/index.html", port: "http" }, initialDelaySeconds: 1, periodSeconds: 1, successThreshold: 2 },
    "http-get http://:http/index.html delay=1s timeout=1s period=1s #success=2 #failure=3",
  ],
  ["defaults: numeric port, path /", { httpGet: { port: 8080 } }, "http-get http://:8080/ delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["https with a host", { httpGet: { scheme: "HTTPS", host: "127.0.0.1", port: 8443, path: "/healthz" } }, "http-get https://127.0.0.1:8443/healthz delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["an IPv6 host is bracketed", { httpGet: { host: "::1", port: 80 } }, "http-get http://[::1]:80/ delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["a path without a leading slash gets one", { httpGet: { port: 80, path: "healthz" } }, "http-get http://:80/healthz delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["a query in the path is escaped, as Go's url.URL{Path} does", { httpGet: { port: 80, path: "/health?full=1" } }, "http-get http://:80/health%3Ffull=1 delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["spaces and non-ASCII in the path are percent-encoded", { httpGet: { port: 80, path: "/a b/é" } }, "http-get http://:80/a%20b/%C3%A9 delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["exec prints Go's %v of the command", { exec: { command: ["sh", "-c", "test -f /tmp/ready"] } }, "exec [sh -c test -f /tmp/ready] delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["tcp-socket with a number", { tcpSocket: { port: 8080 } }, "tcp-socket :8080 delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["grpc prints kubectl's <pod> and the service, empty by default", { grpc: { port: 5000 } }, "grpc <pod>:5000  delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["grpc with a service", { grpc: { port: 5000, service: "db" } }, "grpc <pod>:5000 db delay=0s timeout=1s period=10s #success=1 #failure=3"],
  ["tcp-socket with a host and a named port", { tcpSocket: { host: "localhost", port: "http" } }, "tcp-socket localhost:http delay=0s timeout=1s period=10s #success=1 #failure=3"],
  [
    "kubectl prints whole seconds (%ds), so 90s is not 1m30s",
    { tcpSocket: { port: 8080 }, initialDelaySeconds: 90, timeoutSeconds: 5, periodSeconds: 120, failureThreshold: 30 },
    "tcp-socket :8080 delay=90s timeout=5s period=120s #success=1 #failure=30",
  ],
];

describe("describeProbe", () => {
  for (const [name, raw, line] of cases) {
    test(name, () => expect(describeProbe(probeFrom(raw))).toBe(line));
  }
});

describe("describeHandler", () => {
  test("preStop handlers", () => {
    expect(describeHandler({ type: "sleep", seconds: 5 })).toBe("sleep 5s");
    expect(describeHandler({ type: "exec", command: [] })).toBe("exec []");
  });
});

describe("goDuration (how the rest of describe prints durations)", () => {
  const durations: [number, string][] = [
    [0, "0s"],
    [1000, "1s"],
    [1500, "1.5s"],
    [90_000, "1m30s"],
    [3_600_000, "1h0m0s"],
    [250, "250ms"],
  ];
  for (const [ms, text] of durations) {
    test(`${ms}ms is ${text}`, () => expect(goDuration(ms)).toBe(text));
  }
});
