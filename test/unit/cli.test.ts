import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { captureOutput } from "../capture-output.ts";
import { runCLI } from "../../src/cli/cli.ts";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };

let out: string[];
let output: ReturnType<typeof captureOutput>;

beforeEach(() => {
  out = [];
  output = captureOutput((text) => out.push(text));
});

afterEach(() => output.restore());

describe("the command line", () => {
  test("--version prints the version, that it runs from source, and the Kubernetes release it follows", async () => {
    expect(await runCLI(["--version"])).toBe(0);
    expect(out.join("")).toBe(`minikubelet ${pkg.version} (run from source; kubelet behaviour of Kubernetes 1.37.2)\n`);
  });

  test("the entry prints the same line for --version or -v alone, before loading the parser", async () => {
    for (const flag of ["--version", "-v"]) {
      const entry = Bun.spawnSync([process.execPath, join(import.meta.dir, "../../src/main.ts"), flag]);
      expect(entry.exitCode).toBe(0);
      expect(entry.stdout.toString()).toBe(`minikubelet ${pkg.version} (run from source; kubelet behaviour of Kubernetes 1.37.2)\n`);
    }
  });

  test("an unknown command is a usage error (exit 2) in one line", async () => {
    expect(await runCLI(["frobnicate"])).toBe(2);
    expect(out.join("")).toBe('error: unknown command "frobnicate"; see minikubelet --help\n');
  });

  test("an unknown option is a usage error naming it", async () => {
    expect(await runCLI(["backoff", "--bogus"])).toBe(2);
    expect(out.join("")).toContain("bogus");
  });

  test("run without --manifests is a usage error", async () => {
    expect(await runCLI(["run"])).toBe(2);
    expect(out.join("")).toBe("error: run needs --manifests DIR (or --kubeconfig FILE to join a cluster)\n");
  });

  test("--node-ip is node mode's, and an IP address", async () => {
    expect(await runCLI(["run", "--manifests", import.meta.dir, "--node-ip", "10.0.0.5"])).toBe(2);
    expect(out.join("")).toBe("error: --node-ip needs --kubeconfig (it is the address the cluster reaches the node at)\n");
  });

  test("a bad flag value names the flag and the value, exit 2", async () => {
    expect(await runCLI(["backoff", "--backoff-base", "soon"])).toBe(2);
    expect(out.join("")).toBe('error: --backoff-base must be a number of seconds above 0 (got "soon")\n');
  });
});
