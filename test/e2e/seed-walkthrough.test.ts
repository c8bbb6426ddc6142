/**
 * The seed's Step 10 with the compiled binary and the process runtime: crash restarts at once, then
 * waits 1s, 2s, 4s (--backoff-base 1 --backoff-max 8); web starts only after write-index exits 0
 * and turns ready after two probes; removing crash.json stops its pod (Killing, PodRemoved); every
 * line has the contract's shape; SIGTERM (with --stop-pods-on-exit, as the demo) stops the rest and prints the final table.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { Agent, freePort, processE2E, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();

/** `4.1s Warning BackOff demo/crash-n1 crash: Back-off ...` */
const LINE = /^(\d+\.\d)s (Normal|Warning) ([A-Za-z]+) ([a-z0-9-]+)\/([a-z0-9.-]+)(?: ([a-z0-9-]+))?: (.+)$/;

interface Line {
  at: number;
  type: string;
  reason: string;
  pod: string;
  container: string;
  message: string;
}

function lines(stdout: string): Line[] {
  return stdout
    .split("\n")
    .filter((l) => /^\d+\.\ds /.test(l))
    .map((l) => {
      const m = LINE.exec(l);
      if (!m) throw new Error(`event line not in the contract's format: ${l}`);
      return { at: Number(m[1]), type: m[2]!, reason: m[3]!, pod: `${m[4]}/${m[5]}`, container: m[6] ?? "", message: m[7]! };
    });
}

test("the seed's Step 10 walk-through behaves as written", async () => {
  const ws = (e2e.ws = new Workspace());
  const docroot = join(ws.path, "docroot");
  const port = await freePort();
  ws.write(
    "web.yaml",
    `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: demo }
spec:
  terminationGracePeriodSeconds: 2
  initContainers:
    - name: write-index
      image: python:3.12-alpine
      command: ["sh", "-c", "sleep 1; mkdir -p ${docroot} && echo 'hello from init' > ${docroot}/index.html"]
  containers:
    - name: web
      image: python:3.12-alpine
      command: ["python3", "-m", "http.server", "${port}", "--bind", "127.0.0.1", "--directory", "${docroot}"]
      ports: [{ name: http, containerPort: ${port} }]
      readinessProbe:
        httpGet: { path: /index.html, port: http }
        initialDelaySeconds: 1
        periodSeconds: 1
        successThreshold: 2
`,
  );
  ws.write(
    "crash.json",
    JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "crash", namespace: "demo" },
      spec: { containers: [{ name: "crash", image: "x", command: ["python3", "-c", "raise SystemExit(1)"] }] },
    }),
  );
  const agent = new Agent(ws, ["--backoff-base", "1", "--backoff-max", "8", "--stop-pods-on-exit"]);
  e2e.agents.push(agent);
  await agent.waitForOutput("Ready demo/web-n1 web: Container web is ready", 15_000);
  await waitFor("four starts of crash", () => lines(agent.stdout).filter((l) => l.reason === "Started" && l.container === "crash").length >= 4, 15_000);

  const events = lines(agent.stdout);
  const crashStarts = events.filter((l) => l.reason === "Started" && l.container === "crash").map((l) => l.at);
  const crashExits = events.filter((l) => l.reason === "Exited" && l.container === "crash").map((l) => l.at);
  // Waits between an exit and the next start: 0, then 1s, 2s (the printed times have 0.1s steps).
  const waits = crashStarts.slice(1).map((start, i) => Number((start - crashExits[i]!).toFixed(1)));
  expect(waits[0]).toBeLessThanOrEqual(0.2);
  expect(waits[1]).toBeGreaterThanOrEqual(0.9);
  expect(waits[1]).toBeLessThanOrEqual(1.3);
  expect(waits[2]).toBeGreaterThanOrEqual(1.9);
  expect(waits[2]).toBeLessThanOrEqual(2.3);
  const backOff = events.find((l) => l.reason === "BackOff")!;
  expect(backOff).toMatchObject({ type: "Warning", pod: "demo/crash-n1", container: "crash", message: "Back-off restarting failed container crash in pod crash-n1" });
  expect(events.find((l) => l.reason === "Exited" && l.container === "crash")).toMatchObject({ type: "Warning", message: "Container crash exited with code 1 (Error)" });

  const initExit = events.find((l) => l.reason === "Exited" && l.container === "write-index")!;
  const webStart = events.find((l) => l.reason === "Started" && l.container === "web")!;
  const ready = events.find((l) => l.reason === "Ready")!;
  expect(initExit.message).toBe("Container write-index exited with code 0 (Completed)");
  expect(webStart.at).toBeGreaterThanOrEqual(initExit.at);
  expect(ready.at - webStart.at).toBeGreaterThanOrEqual(1.9);

  ws.remove("crash.json");
  await agent.waitForOutput("PodRemoved demo/crash-n1", 10_000);
  expect(lines(agent.stdout).some((l) => l.reason === "PodRemoved" && l.pod === "demo/crash-n1")).toBe(true);
  expect(ws.cli("get", "pods", "-n", "demo")).not.toContain("crash-n1");

  expect(await agent.terminate()).toBe(0);
  const table = agent.stdout.slice(agent.stdout.lastIndexOf("NAMESPACE"));
  expect(table).toMatch(/^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\ndemo\s+web-n1\s+0\/1\s+Error\s+0\s+\d+s\n$/);
}, 45_000);
