/**
 * Finding a pod from the command line as kubectl users expect: the forms `describe` accepts, and
 * where a pod is when it is not in the namespace asked.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { runCLI } from "../../src/cli/cli.ts";
import { captureOutput } from "../capture-output.ts";
import { desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

let stdout: string;
let stderr: string;
let output: ReturnType<typeof captureOutput>;

beforeEach(() => {
  stdout = "";
  stderr = "";
  output = captureOutput(
    (text) => (stdout += text),
    // These databases have no agent: its "agent not running" note is agent-not-running.test.ts's subject.
    (text) => text.startsWith("agent not running") || (stderr += text),
  );
});

afterEach(() => output.restore());

/** A database with web-lab and crash-lab in namespace demo and api-lab in default. */
async function demoDatabase(dir: string, namespaces = { web: "demo", crash: "demo", api: "default" }) {
  const h = storeHarness(dir);
  await h.kubelet.sync(desired(pod({ name: "web", namespace: namespaces.web }), pod({ name: "crash", namespace: namespaces.crash }), pod({ name: "api", namespace: namespaces.api })));
  await h.advance(1);
  h.agent.close();
  return h.dbPath;
}

async function cli(...args: string[]): Promise<number> {
  stdout = "";
  stderr = "";
  return runCLI(args);
}

describe("describe accepts kubectl's forms", () => {
  test.each([[["pod", "web-lab"]], [["pods", "web-lab"]], [["po", "web-lab"]], [["pod/web-lab"]], [["pods/web-lab"]], [["web-lab"]]])("describe %p", async (args) => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path);
    expect(await cli("describe", ...args, "--db", db)).toBe(0);
    expect(stderr).toBe("");
    expect(stdout).toStartWith("Name:         web-lab\nNamespace:    demo\n");
  });

  test("a bare resource type without a name, or a name given twice, is a usage error", async () => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path);
    expect(await cli("describe", "pods", "--db", db)).toBe(2);
    expect(stderr).toBe("error: describe pods needs a pod NAME\n");
    expect(await cli("describe", "pod/web-lab", "web-lab", "--db", db)).toBe(2);
    expect(await cli("describe", "deployment/web", "--db", db)).toBe(2);
    expect(stderr).toBe('error: unknown resource type "deployment"; minikubelet describes only pods (pod, pods, po)\n');
  });
});

describe("a pod not in the namespace asked says where it is", () => {
  test.each([
    ["get", ["get", "pods", "web-lab"]],
    ["describe", ["describe", "pod", "web-lab", "-n", "default"]],
    ["logs", ["logs", "web-lab", "-n", "default"]],
  ])("%s", async (_, args) => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path);
    expect(await cli(...args, "--db", db)).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toBe('Error from server (NotFound): pods "web-lab" not found\nweb-lab exists in namespace demo: use -n demo\n');
  });

  test("a name in several other namespaces lists them", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    await h.kubelet.sync(desired(pod({ name: "web", namespace: "a" }), pod({ name: "web", namespace: "b", revision: 2 })));
    h.agent.close();
    expect(await cli("get", "pods", "web-lab", "--db", h.dbPath)).toBe(1);
    expect(stderr).toBe('Error from server (NotFound): pods "web-lab" not found\nweb-lab exists in namespaces a, b: use -n NAMESPACE\n');
  });

  test("a name found nowhere names the database looked in", async () => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path);
    expect(await cli("describe", "nope", "--db", db)).toBe(1);
    expect(stderr).toBe(`Error from server (NotFound): pods "nope" not found\nno pod named nope in any namespace of ${db}\n`);
  });
});

describe("get pods without -n notes the pods of other namespaces", () => {
  test("an empty default namespace", async () => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path, { web: "demo", crash: "demo", api: "test" });
    expect(await cli("get", "pods", "--db", db)).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toBe("No resources found in default namespace.\n(3 pods in other namespaces: use -A)\n");
  });

  test("beside the default namespace's own pods, on stderr", async () => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path, { web: "default", crash: "demo", api: "default" });
    expect(await cli("get", "pods", "--db", db)).toBe(0);
    expect(stdout.split("\n").map((line) => line.split(/\s+/)[0])).toEqual(["NAME", "api-lab", "web-lab", ""]);
    expect(stderr).toBe("(1 pod in another namespace: use -A)\n");
  });

  test("nothing is noted with -n, -A, or when every pod is in default", async () => {
    using dir = tempDir();
    const db = await demoDatabase(dir.path);
    expect(await cli("get", "pods", "-n", "default", "--db", db)).toBe(0);
    expect(stderr).toBe("");
    expect(await cli("get", "pods", "-A", "--db", db)).toBe(0);
    expect(stderr).toBe("");
    using other = tempDir();
    const allDefault = await demoDatabase(other.path, { web: "default", crash: "default", api: "default" });
    expect(await cli("get", "pods", "--db", allDefault)).toBe(0);
    expect(stderr).toBe("");
  });
});
