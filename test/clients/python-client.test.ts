/**
 * Debian's python3-kubernetes against the compiled agent (process runtime), as a user's script
 * drives it (python-client.py): `CoreApi().get_api_versions()` needs /api's
 * serverAddressByClientCIDRs; a bare dict body is created (the API server takes apiVersion and
 * kind from the URL); the library's watch helper sends watch=True; then list, read log, exec and
 * delete (port-forward: portforward-clients.test.ts). The library has no informer. Without the library the test is skipped,
 * or fails under CI=true (scripts/test installs it with apt).
 */
import { beforeAll, expect, test } from "bun:test";
import { useAgentWithApi } from "../kubectl/harness.ts";
import { describeWithPythonClient, PYTHON, runClientScript, stepOf, type Step } from "./client-script.ts";

const SCRIPT = new URL("./python-client.py", import.meta.url).pathname;

describeWithPythonClient("the Python kubernetes client", () => {
  const live = useAgentWithApi();
  let steps: Map<string, Step>;

  beforeAll(async () => {
    steps = await runClientScript([PYTHON, SCRIPT, live.session.kubeconfig, "default", "py-web"]);
  }, 120_000);

  const step = (name: string): Step => stepOf(steps, name);

  test("get_api_versions reads /api, whose serverAddressByClientCIDRs names the address dialed", () => {
    expect(step("versions")).toMatchObject({ versions: ["v1"], addresses: [expect.stringMatching(/^127\.0\.0\.1:\d+$/)] });
  });

  test("a body without apiVersion or kind is created as a Pod", () => {
    expect(step("create")).toMatchObject({ name: "py-web", kind: "Pod", phase: "Pending" });
  });

  test("the watch helper (watch=True) streams the pod from ADDED to Running", () => {
    const watched = step("watch") as Step & { types: string[]; phases: string[] };
    expect(watched.types[0]).toBe("ADDED");
    expect(watched.types.length).toBeGreaterThan(1);
    expect(watched.types.slice(1).every((type) => type === "MODIFIED")).toBe(true);
    expect(watched.phases.at(-1)).toBe("Running");
  });

  test("list by label, read the log, exec with separate streams and its exit code", () => {
    expect(step("list")).toMatchObject({ names: ["py-web"], resourceVersion: expect.stringMatching(/^\d+$/) });
    expect(step("log")).toMatchObject({ text: "hello from python\n" });
    expect(step("exec")).toMatchObject({ stdout: "out\n", stderr: "err\n", returncode: 3 });
  });


  test("delete answers the pod with its deletionTimestamp, and it goes", () => {
    expect(step("delete")).toMatchObject({ kind: "Pod", deletionTimestamp: expect.stringMatching(/^\d{4}-/) });
    expect(step("gone")).toMatchObject({ status: 404 });
  });
});
