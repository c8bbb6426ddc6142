import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../src/cli/errors.ts";
import { validateCommand, type ValidateCommandOptions } from "../../src/cli/validate.ts";
import type { CommandOutput } from "../../src/cli/stdio.ts";

const fixtures = join(import.meta.dir, "..", "fixtures", "manifests");
const examples = join(import.meta.dir, "..", "..", "examples");

function run(dir: string, node?: string, options: ValidateCommandOptions = {}): { code: number; stdout: string; stderr: string } {
  let stdout = "";
  let stderr = "";
  const output: CommandOutput = { out: (text) => void (stdout += text), err: (text) => void (stderr += text) };
  const code = validateCommand(dir, { node, ...options }, output);
  return { code, stdout, stderr };
}

describe("minikubelet validate", () => {
  test("lists each pod, its containers and each probe as kubectl describe prints it", () => {
    const result = run(join(fixtures, "valid"), "lab");
    expect(result).toEqual({
      code: 0,
      stderr: "",
      stdout: [
        "Pod crash-lab (crash.json)",
        "  Namespace:        demo",
        "  Restart Policy:   OnFailure",
        "  Init Containers:  <none>",
        "  Containers:       crash",
        "  QoS Class:        BestEffort",
        "Pod web-lab (web.yaml)",
        "  Namespace:        demo",
        "  Restart Policy:   Always",
        "  Init Containers:  write-index, proxy (sidecar)",
        "  Containers:       web",
        "  QoS Class:        BestEffort",
        "  proxy:",
        "    Startup:    exec [sh -c test -f /tmp/ready] delay=0s timeout=1s period=10s #success=1 #failure=3",
        "  web:",
        "    Liveness:   tcp-socket :http delay=0s timeout=1s period=5s #success=1 #failure=3",
        "    Readiness:  http-get http://:http/index.html delay=1s timeout=1s period=1s #success=2 #failure=3",
        "2 pods valid, 0 files refused",
        "",
      ].join("\n"),
    });
  });

  test("a container's own restart policy and rules (KEP-5307) are listed with it; a bad rule is refused on its path", () => {
    const dir = mkdtempSync(join(tmpdir(), "mk-validate-rules-"));
    try {
      const pod = (rules: string) =>
        `apiVersion: v1\nkind: Pod\nmetadata: {name: job}\nspec:\n  restartPolicy: Never\n  containers:\n    - name: worker\n      image: busybox\n      command: [sh, -c, "exit 42"]\n      restartPolicy: Never\n      restartPolicyRules: ${rules}\n`;
      writeFileSync(join(dir, "job.yaml"), pod("[{action: Restart, exitCodes: {operator: In, values: [42]}}, {action: Restart, exitCodes: {operator: NotIn, values: [0, 1]}}]"));
      const ok = run(dir);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain("  worker:\n    Restart:    Never, restartPolicyRules: In [42], NotIn [0, 1]\n");
      writeFileSync(join(dir, "job.yaml"), pod("[{action: Restart, exitCodes: {operator: Is, values: [42]}}]"));
      const bad = run(dir);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toBe('job.yaml: spec.containers[0].restartPolicyRules[0].exitCodes.operator: Unsupported value: "Is": supported values: "In", "NotIn"\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("prints every bad file as one line on stderr and exits 1; hidden, other and nested files are ignored", () => {
    const result = run(join(fixtures, "mixed"));
    expect(result.code).toBe(1);
    expect(result.stderr.split("\n")).toEqual([
      "bad-probe.yaml: spec.containers[0].env[0].value: must be a string (found number 8080); quote it; " +
        "spec.containers[0].livenessProbe: needs exactly one of exec, httpGet, tcpSocket, grpc (found none); " +
        `spec.containers[0]: required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)`,
      "dup-crash.yaml: pod demo/crash is already defined in crash.json; ignoring this file",
      "",
    ]);
    expect(result.stdout).toStartWith("Pod crash (crash.json)\n");
    expect(result.stdout).toEndWith("1 pod valid, 2 files refused\n");
  });

  test("a missing directory exits 1 with a message naming it", () => {
    const missing = join(fixtures, "no-such-dir");
    expect(run(missing)).toEqual({ code: 1, stdout: "", stderr: `error: manifest directory ${missing}: does not exist\n` });
  });

  test("a node name that could not be part of a pod name is a usage error", () => {
    expect(() => run(join(fixtures, "valid"), "Lab_1")).toThrow(UsageError);
  });

  test("the shipped examples are valid", () => {
    const result = run(examples, "lab");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Pod web-lab (web.yaml)");
    expect(result.stdout).toContain("    Readiness:  http-get http://:http/index.html delay=1s timeout=1s period=1s #success=2 #failure=3");
    expect(result.stdout).toContain("Pod crash-lab (crash.json)");
    // kubectl's default namespace: after scripts/demo, a plain `get pods` finds them.
    expect(result.stdout.match(/^ {2}Namespace: +(\S+)$/gm)).toEqual(["  Namespace:        default", "  Namespace:        default"]);
  });
});

describe("minikubelet validate, as strict as run", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mk-validate-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const manifest = (container: Record<string, unknown>) =>
    JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "busybox", ...container }] } });

  test("a container with neither command nor args is refused under the process runtime (run's default), accepted under docker", () => {
    writeFileSync(join(dir, "web.json"), manifest({}));
    const refusal = `web.json: spec.containers[0]: required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)\n`;
    expect(run(dir)).toMatchObject({ code: 1, stderr: refusal });
    expect(run(dir, undefined, { runtime: "process" })).toMatchObject({ code: 1, stderr: refusal });
    expect(run(dir, undefined, { runtime: "docker" })).toMatchObject({ code: 0, stderr: "" });
  });

  test("args without command are valid under the process runtime: args[0] is the program, as an image's CMD without ENTRYPOINT", () => {
    writeFileSync(join(dir, "web.json"), manifest({ args: ["sleep", "10"] }));
    expect(run(dir)).toMatchObject({ code: 0, stderr: "" });
    expect(run(dir).stdout).toContain("Pod web (web.json)");
  });

  test("an unknown runtime is a usage error", () => {
    expect(() => run(dir, undefined, { runtime: "podman" })).toThrow(UsageError);
  });

  test("unknown fields and fields the runtime ignores are warnings; --strict refuses unknown fields", () => {
    writeFileSync(join(dir, "web.json"), manifest({ command: ["sleep", "9"], comand: ["sleep"], securityContext: { seccompProfile: { type: "RuntimeDefault" } } }));
    const warned = run(dir);
    expect(warned.code).toBe(0);
    expect(warned.stderr.split("\n")).toEqual([
      'Warning: web.json: unknown field "spec.containers[0].comand"',
      "Warning: web.json: spec.containers[0].securityContext.seccompProfile: not honoured by the process runtime",
      "",
    ]);
    const strict = run(dir, undefined, { strict: true });
    expect(strict.code).toBe(1);
    expect(strict.stderr).toBe('web.json: unknown field "spec.containers[0].comand"\n');
    expect(strict.stdout).toBe("0 pods valid, 1 file refused\n");
  });

  test("each container's limits and requests (defaulted from limits) and the pod's QoS class are listed", () => {
    writeFileSync(join(dir, "web.json"), manifest({ command: ["sleep", "9"], resources: { limits: { cpu: "0.5", memory: "128Mi" }, requests: { cpu: "250m" } } }));
    const result = run(dir);
    expect(result.code).toBe(0);
    expect(result.stdout.split("\n")).toEqual([
      "Pod web (web.json)",
      "  Namespace:        default",
      "  Restart Policy:   Always",
      "  Init Containers:  <none>",
      "  Containers:       web",
      "  QoS Class:        Burstable",
      "  web:",
      "    Limits:     cpu=500m, memory=128Mi",
      "    Requests:   cpu=250m, memory=128Mi",
      "1 pod valid, 0 files refused",
      "",
    ]);
    // cpu and memory are the process runtime's cgroups' to enforce: nothing to warn about.
    expect(result.stderr).toBe("");
  });

  test("a resource the process runtime's cgroups do not limit is a warning naming it", () => {
    writeFileSync(join(dir, "web.json"), manifest({ command: ["sleep", "9"], resources: { limits: { memory: "1Gi", "ephemeral-storage": "1Gi" } } }));
    const result = run(dir);
    expect(result.code).toBe(0);
    expect(result.stderr.split("\n")).toEqual([
      "Warning: web.json: spec.containers[0].resources.limits.ephemeral-storage: not enforced by the process runtime",
      "",
    ]);
  });

  test("a request above its limit refuses the file with the API server's words", () => {
    writeFileSync(join(dir, "web.json"), manifest({ command: ["sleep", "9"], resources: { limits: { cpu: "500m" }, requests: { cpu: "1" } } }));
    expect(run(dir)).toMatchObject({
      code: 1,
      stderr: 'web.json: spec.containers[0].resources.requests: "1": must be less than or equal to cpu limit of 500m\n',
    });
  });

  test("a single file is validated as its directory would be, without its neighbours", () => {
    writeFileSync(join(dir, "web.json"), manifest({ command: ["sleep", "9"] }));
    writeFileSync(join(dir, "broken.yaml"), "kind: Pod\n");
    expect(run(join(dir, "web.json"), "lab")).toMatchObject({ code: 0, stderr: "", stdout: expect.stringMatching(/^Pod web-lab \(web\.json\)\n[^]*1 pod valid, 0 files refused\n$/) });
    expect(run(join(dir, "broken.yaml")).code).toBe(1);
  });
});
