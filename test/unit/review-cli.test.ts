import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCLI } from "../../src/cli/cli.ts";
import { validateCommand } from "../../src/cli/validate.ts";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, output: { out: (text: string) => void out.push(text), err: (text: string) => void err.push(text) } };
}

function tempManifests(files: Record<string, string>) {
  const path = mkdtempSync(join(tmpdir(), "minikubelet-review-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(path, name), text);
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

const FLAKY_LIVENESS = `apiVersion: v1
kind: Pod
metadata: {name: api}
spec:
  containers:
    - name: api
      image: busybox
      command: [sleep, "3600"]
      ports: [{name: http, containerPort: 8080}]
      readinessProbe: {httpGet: {path: /readyz, port: http}}
      livenessProbe: {tcpSocket: {port: http}, failureThreshold: 1}
`;

describe("validate --review", () => {
  test("validates, then reviews the valid pods; a warning finding makes it exit 1", () => {
    using dir = tempManifests({ "api.yaml": FLAKY_LIVENESS });
    const io = capture();
    expect(validateCommand(dir.path, { review: true }, io.output)).toBe(1);
    const text = io.out.join("");
    expect(text).toContain("1 pod valid, 0 files refused\n\napi.yaml: Pod api\n");
    expect(text).toContain("  warning liveness-failure-threshold-1  spec.containers[0].livenessProbe.failureThreshold\n");
    expect(io.err).toEqual([]);
  });

  test("without --review, the same directory validates with exit 0; the examples pass both", () => {
    using dir = tempManifests({ "api.yaml": FLAKY_LIVENESS });
    expect(validateCommand(dir.path, {}, capture().output)).toBe(0);
    const io = capture();
    expect(validateCommand(join(import.meta.dir, "../../examples"), { review: true }, io.output)).toBe(0);
    expect(io.out.join("")).toEndWith("no findings in 2 objects\n");
  });

  test("a refused file is not reviewed a second time", () => {
    using dir = tempManifests({ "api.yaml": FLAKY_LIVENESS, "bad.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: bad}\nspec: {containers: []}\n" });
    const io = capture();
    expect(validateCommand(dir.path, { review: true }, io.output)).toBe(1);
    expect(io.err).toEqual(["bad.yaml: spec.containers: must have at least one container\n"]);
    expect(io.out.join("")).not.toContain("bad.yaml: Pod");
  });
});

describe("review on the command line", () => {
  test("an unknown -o is a usage error (2); a missing path is one line naming it (1)", async () => {
    expect(await runCLI(["review", "examples", "-o", "xml"])).toBe(2);
    expect(await runCLI(["review", "/nonexistent/deploy.yaml"])).toBe(1);
    expect(await runCLI(["review", "examples", "--db", "/tmp/x.db"])).toBe(2);
  });
});
