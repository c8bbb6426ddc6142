/**
 * `get pods -f FILE` end to end on hand-written but realistic `kubectl get pods -o json|yaml`
 * fixtures: the rendered table, -o wide|name|json|yaml, -n / -A / NAME filtering, and errors that
 * name the file and the field.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { captureOutput } from "../capture-output.ts";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { runCLI } from "../../src/cli/cli.ts";
import { UsageError, UserError } from "../../src/cli/errors.ts";
import { getCommand, type GetCommandOptions } from "../../src/cli/get/get.ts";
import { parsePods, PodFileError } from "../../src/v1/pod-list.ts";
import { formatPods } from "../../src/printers/pod-table.ts";
import { FakeClock } from "../fake-clock.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "kubectl");
const DEFAULT_LIST = join(FIXTURES, "pods-default.json");
const ALL_NAMESPACES = join(FIXTURES, "pods-all-namespaces.yaml");
const SINGLE_POD = join(FIXTURES, "pod-payments-api.json");
/** The moment the fixtures were "captured". */
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function get(resource: string, name: string | undefined, options: GetCommandOptions): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await getCommand(resource, name, options, {
    clock: new FakeClock(NOW),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

/** Table text from lines, so the expected columns line up in the source. */
function lines(...rows: string[]): string {
  return rows.map((row) => `${row}\n`).join("");
}

describe("get pods -f with real kubectl output", () => {
  test("default table", async () => {
    const run = await get("pods", undefined, { filename: DEFAULT_LIST });
    expect(run).toEqual({
      code: 0,
      stderr: "",
      stdout: lines(
        "NAME                           READY   STATUS             RESTARTS      AGE",
        "web-7d4b9c8f6-x2x7k            1/1     Running            0             65m",
        "payments-api-5f6c7d8b9-qk4zt   0/1     CrashLoopBackOff   6 (80s ago)   8m30s",
        "db-migrate-6b8f9d7c4-tz5wn     0/1     Init:1/2           0             45s",
        "backup-29449080-lq9dn          0/1     Completed          0             6h",
        "checkout-6c9f8d7b5-m2vfp       2/2     Running            1 (2d ago)    3d4h",
        "worker-84d5f6c7b9-8hk2d        1/1     Terminating        0             12d",
        "log-export-x7q2p               0/2     Error              0             20m",
      ),
    });
  });

  test("-o wide adds IP, NODE, NOMINATED NODE and READINESS GATES", async () => {
    const run = await get("po", undefined, { filename: DEFAULT_LIST, output: "wide" });
    expect(run.stdout).toBe(
      lines(
        "NAME                           READY   STATUS             RESTARTS      AGE     IP            NODE                NOMINATED NODE   READINESS GATES",
        "web-7d4b9c8f6-x2x7k            1/1     Running            0             65m     10.244.0.12   lab-control-plane   <none>           <none>",
        "payments-api-5f6c7d8b9-qk4zt   0/1     CrashLoopBackOff   6 (80s ago)   8m30s   10.244.0.31   lab-control-plane   <none>           <none>",
        "db-migrate-6b8f9d7c4-tz5wn     0/1     Init:1/2           0             45s     10.244.0.33   lab-control-plane   <none>           <none>",
        "backup-29449080-lq9dn          0/1     Completed          0             6h      10.244.0.8    lab-control-plane   <none>           <none>",
        "checkout-6c9f8d7b5-m2vfp       2/2     Running            1 (2d ago)    3d4h    10.244.0.21   lab-control-plane   <none>           <none>",
        "worker-84d5f6c7b9-8hk2d        1/1     Terminating        0             12d     10.244.0.5    lab-control-plane   <none>           <none>",
        "log-export-x7q2p               0/2     Error              0             20m     10.244.0.40   lab-control-plane   <none>           <none>",
      ),
    );
  });

  test("-A puts NAMESPACE first; YAML input reads the same", async () => {
    const run = await get("pods", undefined, { filename: ALL_NAMESPACES, allNamespaces: true });
    expect(run.stdout).toBe(
      lines(
        "NAMESPACE     NAME        READY   STATUS             RESTARTS     AGE",
        "kube-system   etcd-lab    1/1     Running            0            13h",
        "demo          crash-lab   0/1     CrashLoopBackOff   3 (3s ago)   10s",
        "demo          web-lab     0/1     Init:0/1           0            2s",
      ),
    );
  });

  test("-n keeps one namespace; an empty result says so on stderr", async () => {
    const demo = await get("pods", undefined, { filename: ALL_NAMESPACES, namespace: "demo", output: "name" });
    expect(demo.stdout).toBe("pod/crash-lab\npod/web-lab\n");
    const none = await get("pods", undefined, { filename: ALL_NAMESPACES, namespace: "payments" });
    expect(none).toEqual({ code: 0, stdout: "", stderr: "No resources found in payments namespace.\n" });
  });

  test("-A wins over -n, as in kubectl", async () => {
    const run = await get("pods", undefined, { filename: ALL_NAMESPACES, namespace: "demo", allNamespaces: true, output: "name" });
    expect(run.stdout).toBe("pod/etcd-lab\npod/crash-lab\npod/web-lab\n");
  });

  test("NAME and pod/NAME select one pod", async () => {
    const byName = await get("pods", "log-export-x7q2p", { filename: DEFAULT_LIST });
    expect(byName.stdout).toBe(lines("NAME               READY   STATUS   RESTARTS   AGE", "log-export-x7q2p   0/2     Error    0          20m"));
    const slashed = await get("pod/log-export-x7q2p", undefined, { filename: DEFAULT_LIST });
    expect(slashed.stdout).toBe(byName.stdout);
  });

  test("a single Pod file", async () => {
    const run = await get("pods", undefined, { filename: SINGLE_POD });
    expect(run.stdout).toBe(
      lines(
        "NAME                           READY   STATUS             RESTARTS      AGE",
        "payments-api-5f6c7d8b9-qk4zt   0/1     CrashLoopBackOff   6 (80s ago)   8m30s",
      ),
    );
  });
});

describe("-o json and -o yaml", () => {
  test("a list prints as kubectl does: sorted keys, four-space indent, a v1 List", async () => {
    const run = await get("pods", undefined, { filename: DEFAULT_LIST, output: "json" });
    // The fixture was written in kubectl's own layout, so a read and a print give it back byte for byte.
    expect(run.stdout).toBe(readFileSync(DEFAULT_LIST, "utf8"));
  });

  test("NAME prints the Pod itself, not a List", async () => {
    const run = await get("pods", "payments-api-5f6c7d8b9-qk4zt", { filename: DEFAULT_LIST, output: "json" });
    expect(run.stdout).toBe(readFileSync(SINGLE_POD, "utf8"));
  });

  test("yaml carries the same object, and reads back with -f", async () => {
    const run = await get("pods", "payments-api-5f6c7d8b9-qk4zt", { filename: DEFAULT_LIST, output: "yaml" });
    expect(run.stdout).toStartWith("apiVersion: v1\nkind: Pod\nmetadata:\n");
    expect(YAML.parse(run.stdout)).toEqual(JSON.parse(readFileSync(SINGLE_POD, "utf8")));
    expect(parsePods(run.stdout, "out.yaml").map((pod) => pod.metadata.name)).toEqual(["payments-api-5f6c7d8b9-qk4zt"]);
  });

  test("items of a PodList without kind get apiVersion and kind in the List", async () => {
    using dir = tempDir();
    const file = dir.write("podlist.json", JSON.stringify({ apiVersion: "v1", kind: "PodList", items: [{ metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }] }));
    const run = await get("pods", undefined, { filename: file, output: "json" });
    expect(JSON.parse(run.stdout)).toEqual({
      apiVersion: "v1",
      kind: "List",
      metadata: { resourceVersion: "" },
      items: [{ apiVersion: "v1", kind: "Pod", metadata: { name: "a" }, spec: { containers: [{ name: "c" }] } }],
    });
  });
});

describe("formatPods", () => {
  test("no pods: empty table text, an empty List for json", async () => {
    expect(formatPods([], { now: NOW })).toBe("");
    expect(formatPods([], { now: NOW, output: "wide", allNamespaces: true })).toBe("");
    using dir = tempDir();
    const run = await get("pods", undefined, { filename: dir.write("empty.json", '{"apiVersion":"v1","kind":"List","items":[]}'), output: "json" });
    expect(JSON.parse(run.stdout)).toEqual({ apiVersion: "v1", items: [], kind: "List", metadata: { resourceVersion: "" } });
  });

  test("-o name ignores -A, like kubectl", () => {
    const pods = parsePods(readFileSync(ALL_NAMESPACES, "utf8"), ALL_NAMESPACES);
    expect(formatPods(pods, { now: NOW, output: "name", allNamespaces: true })).toBe("pod/etcd-lab\npod/crash-lab\npod/web-lab\n");
  });

  test("a pod without a namespace shows as default under -A", () => {
    const pods = parsePods('{"kind":"Pod","metadata":{"name":"bare"},"spec":{"containers":[{"name":"c"}]}}', "bare.json");
    expect(formatPods(pods, { now: NOW, allNamespaces: true })).toBe(lines("NAMESPACE   NAME   READY   STATUS   RESTARTS   AGE", "default     bare   0/1              0          <unknown>"));
  });
});

describe("errors name the file, the field and the value", () => {
  test("a missing file", async () => {
    await expect(get("pods", undefined, { filename: "/nonexistent/pods.json" })).rejects.toThrow("/nonexistent/pods.json: no such file");
  });

  test("bad JSON, bad YAML, wrong kinds and missing fields", () => {
    const cases: [string, string][] = [
      ['{"kind": "Pod", ', "f.json: invalid JSON"],
      ["kind: [unclosed", "f.json: invalid YAML"],
      ["", "f.json: is empty; expected a Pod, PodList or List"],
      ['{"kind": "Service", "apiVersion": "v1"}', 'f.json: kind: expected Pod, PodList or List, got "Service"'],
      ['{"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": []}}, {"kind": "Service"}]}', 'f.json: items[1].kind: expected Pod, got "Service"'],
      ['{"kind": "List", "items": [{"kind": "Pod", "metadata": {}, "spec": {"containers": []}}]}', "f.json: items[0].metadata.name: expected a non-empty string, got nothing"],
      ['{"kind": "Pod", "metadata": {"name": "a"}}', "f.json: spec: required"],
      ['{"kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"image": "x"}]}}', "f.json: spec.containers[0].name: expected a string, got nothing"],
      ['{"kind": "Pod", "apiVersion": "v2", "metadata": {"name": "a"}, "spec": {"containers": []}}', 'f.json: apiVersion: expected v1, got "v2"'],
      ["kind: Pod\nmetadata: {name: a}\nspec: {containers: []}\n---\nkind: Node\n", 'f.json: document 2: kind: expected Pod, PodList or List, got "Node"'],
    ];
    for (const [text, message] of cases) {
      let error: unknown;
      try {
        parsePods(text, "f.json");
      } catch (caught) {
        error = caught;
      }
      expect(error, text).toBeInstanceOf(PodFileError);
      expect((error as Error).message, text).toStartWith(message);
    }
  });

  test("a pod that is not in the file", async () => {
    const missing = get("pods", "nope", { filename: DEFAULT_LIST });
    await expect(missing).rejects.toBeInstanceOf(UserError);
    await expect(get("pods", "nope", { filename: DEFAULT_LIST, namespace: "kube-system" })).rejects.toThrow(
      `pods "nope" not found in namespace "kube-system" of ${DEFAULT_LIST}`,
    );
  });

  test("the same name in two namespaces needs -n", async () => {
    using dir = tempDir();
    const pod = (namespace: string) => ({ kind: "Pod", metadata: { name: "web", namespace }, spec: { containers: [{ name: "c" }] } });
    const file = dir.write("two.json", JSON.stringify({ kind: "List", apiVersion: "v1", items: [pod("a"), pod("b")] }));
    await expect(get("pods", "web", { filename: file })).rejects.toThrow(`pods "web" is in several namespaces of ${file} (a, b); choose one with -n`);
    expect((await get("pods", "web", { filename: file, namespace: "b", output: "name" })).stdout).toBe("pod/web\n");
  });

  test("usage errors: resource type, output format, watch on a file, a doubled name", async () => {
    await expect(get("services", undefined, { filename: DEFAULT_LIST })).rejects.toThrow('unknown resource type "services"');
    await expect(get("pods", undefined, { filename: DEFAULT_LIST, output: "jsonpath" })).rejects.toThrow('unknown output format "jsonpath"');
    await expect(get("pods", undefined, { filename: DEFAULT_LIST, watch: true })).rejects.toBeInstanceOf(UsageError);
    await expect(get("pod/a", "b", { filename: DEFAULT_LIST })).rejects.toBeInstanceOf(UsageError);
  });

  test("without -f a missing state database is named in the error", async () => {
    await expect(get("pods", undefined, { db: "/nonexistent/minikubelet/state.db" })).rejects.toThrow(
      'state database /nonexistent/minikubelet/state.db does not exist (start "minikubelet run" first, or pass --db PATH)',
    );
  });
});

describe("through the command line", () => {
  let written: string[];
  let output: ReturnType<typeof captureOutput>;
  beforeEach(() => {
    written = [];
    output = captureOutput((text) => written.push(text));
  });
  afterEach(() => output.restore());

  test("-A, -f and -o reach the command; a bad file exits 1, a bad flag value 2", async () => {
    expect(await runCLI(["get", "pods", "-A", "-f", ALL_NAMESPACES, "-o", "name"])).toBe(0);
    expect(written.join("")).toBe("pod/etcd-lab\npod/crash-lab\npod/web-lab\n");
    written.length = 0;
    expect(await runCLI(["get", "pods", "-f", "/nonexistent/x.json"])).toBe(1);
    expect(written.join("")).toBe("error: /nonexistent/x.json: no such file\n");
    expect(await runCLI(["get", "pods", "-f", ALL_NAMESPACES, "-o", "table"])).toBe(2);
  });

  test("a numeric namespace still matches (cac hands it over as a number)", async () => {
    using dir = tempDir();
    const pod = { kind: "Pod", metadata: { name: "batch", namespace: "2024" }, spec: { containers: [{ name: "c" }] } };
    const file = dir.write("ns.json", JSON.stringify(pod));
    expect(await runCLI(["get", "pods", "-n", "2024", "-f", file, "-o", "name"])).toBe(0);
    expect(written.join("")).toBe("pod/batch\n");
  });
});

/** A temporary directory removed when the `using` scope ends. */
function tempDir() {
  const path = mkdtempSync(join(tmpdir(), "minikubelet-get-"));
  return {
    path,
    write(name: string, text: string): string {
      const file = join(path, name);
      writeFileSync(file, text);
      return file;
    },
    [Symbol.dispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}
