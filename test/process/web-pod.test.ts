import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { ProbeManager } from "../../src/prober/probe-manager.ts";
import { Prober } from "../../src/prober/prober.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-web-"));
  runtime = new ProcessRuntime({ rootDir: join(root, "runtime"), owner: cgroups.ownerFor(root) });
  const prober = new Prober({ clock: realClock, exec: (id, command, timeoutMs) => runtime.execSync(id, command, timeoutMs) });
  h = realHarness(runtime, { probes: new ProbeManager({ runner: prober, clock: realClock }) });
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The seed's Step 10 web pod, with its docroot and port made private to this test. */
function webPod(docroot: string, port: number): PodSpec {
  const manifest = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "demo" },
    spec: {
      terminationGracePeriodSeconds: 2,
      initContainers: [
        { name: "write-index", image: "python:3.12-alpine", command: ["sh", "-c", `sleep 0.3; mkdir -p ${docroot} && echo 'hello from init' > ${docroot}/index.html`] },
      ],
      containers: [
        {
          name: "web",
          image: "python:3.12-alpine",
          command: ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1", "--directory", docroot],
          ports: [{ name: "http", containerPort: port }],
          readinessProbe: { httpGet: { path: "/index.html", port: "http" }, initialDelaySeconds: 1, periodSeconds: 1, successThreshold: 2 },
        },
      ],
    },
  };
  return validatePod(manifest, { file: "web.yaml", source: join(root, "web.yaml"), node: "lab" });
}

test("the seed's web pod: ready after two good probes, 0/1 after three failures without a restart, ready again", async () => {
  const docroot = join(root, "docroot");
  const web = webPod(docroot, await freePort());
  await h.kubelet.sync(desired(web));
  const ready = await h.event((e) => e.reason === "Ready", 10_000, "Ready");
  const started = h.events.find((e) => e.reason === "Started" && e.container === "web")!;
  const writeIndexExit = h.events.find((e) => e.reason === "Exited" && e.container === "write-index")!;
  expect(writeIndexExit.message).toBe("Container write-index exited with code 0 (Completed)");
  expect(started.at).toBeGreaterThanOrEqual(writeIndexExit.at);
  // initialDelaySeconds 1, then a second success one period later.
  expect(ready.at - started.at).toBeGreaterThanOrEqual(1900);

  unlinkSync(join(docroot, "index.html"));
  const notReady = await h.event((e) => e.reason === "NotReady", 10_000, "NotReady");
  const failures = h.events.filter((e) => e.reason === "Unhealthy" && e.at <= notReady.at);
  expect(failures).toHaveLength(3);
  expect(failures[0]!.message).toBe("Readiness probe failed: HTTP probe failed with statuscode: 404");
  const record = h.kubelet.pods.get(web.key)!;
  expect(record.app[0]!.ready).toBe(false);
  expect(restartCountOf(record.app[0]!)).toBe(0);
  expect(h.events.filter((e) => e.reason === "Killing")).toEqual([]);

  writeFileSync(join(docroot, "index.html"), "back\n");
  await h.event((e) => e.reason === "Ready" && e.at > notReady.at, 10_000, "Ready again");
  expect(restartCountOf(h.kubelet.pods.get(web.key)!.app[0]!)).toBe(0);
}, 30_000);
