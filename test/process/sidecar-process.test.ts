/**
 * Issue 8 on the process runtime: a native sidecar (an init container with restartPolicy Always)
 * serves HTTP on loopback, the app container fetches from it and exits 0, and under restartPolicy
 * Never the pod then Succeeds and the sidecar is stopped.
 */
import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { container, desired, pod } from "../pod-builder.ts";
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
  root = mkdtempSync(join(tmpdir(), "mk-sidecar-"));
  runtime = new ProcessRuntime({ rootDir: join(root, "runtime"), owner: cgroups.ownerFor(root) });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

/** A loopback port nothing listens on right now. */
function freePort(): Promise<number> {
  const server = net.createServer();
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

test("a sidecar serves the app on 127.0.0.1; the Job-like pod succeeds and the sidecar is then stopped", async () => {
  const port = await freePort();
  const docroot = join(root, "www");
  const fetchScript = [
    "import sys, time, urllib.request",
    "for _ in range(100):",
    "    try:",
    `        print(urllib.request.urlopen("http://127.0.0.1:${port}/index.html", timeout=1).read().decode(), end="")`,
    "        sys.exit(0)",
    "    except OSError:",
    "        time.sleep(0.05)",
    "sys.exit(1)",
  ].join("\n");
  const server = container("server", {
    restartPolicy: "Always",
    command: ["sh", "-c", `mkdir -p ${docroot} && echo sidecar-says-hi > ${docroot}/index.html && exec python3 -m http.server ${port} --bind 127.0.0.1 --directory ${docroot}`],
  });
  const app = container("app", { command: ["python3", "-c", fetchScript] });
  const job = pod({ name: "sidecar", restartPolicy: "Never", grace: 5, init: [server], containers: [app] });
  await h.kubelet.sync(desired(job));

  expect((await h.event((e) => e.reason === "Exited" && e.container === "app")).message).toBe("Container app exited with code 0 (Completed)");
  const record = () => h.kubelet.pods.get(job.key)!;
  expect(await runtime.readLogs(record().app[0]!.containerId!)).toBe("sidecar-says-hi\n");
  // The app has finished: the sidecar gets SIGTERM (python's default action: 128 + 15).
  expect((await h.event((e) => e.reason === "Exited" && e.container === "server")).message).toBe("Container server exited with code 143 (Error)");
  await h.kubelet.idle();
  expect(record().phase).toBe("Succeeded");
  expect(record().init[0]!.state).toBe("terminated");
  expect(restartCountOf(record().init[0]!)).toBe(0);
  expect(h.events.filter((e) => e.reason === "Started").map((e) => e.container)).toEqual(["server", "app"]);
  // Nothing listens on the port any more.
  await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
});
