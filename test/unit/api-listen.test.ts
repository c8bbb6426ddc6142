/** `--api-listen` values, and `minikubelet kubeconfig` from the files `run` leaves next to the database. */
import { expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { parseListenAddress } from "../../src/api/start.ts";
import { ensureCredentials, recordServerAddress } from "../../src/api/http/tls.ts";
import { runCLI } from "../../src/cli/cli.ts";
import { kubeconfigText } from "../../src/cli/kubeconfig.ts";
import { serveCommand } from "../../src/cli/serve.ts";
import { tempDir } from "../store-fixtures.ts";

test("--api-listen takes HOST:PORT, [IPv6]:PORT and off; anything else names the flag", () => {
  expect(parseListenAddress("127.0.0.1:6443")).toEqual({ hostname: "127.0.0.1", port: 6443 });
  expect(parseListenAddress("[::1]:0")).toEqual({ hostname: "::1", port: 0 });
  expect(parseListenAddress("localhost:7000")).toEqual({ hostname: "localhost", port: 7000 });
  expect(parseListenAddress("off")).toBe("off");
  for (const bad of ["6443", "127.0.0.1", "127.0.0.1:70000", "::1:6443", "[localhost]:1", "127.0.0.1:", "on"]) {
    expect(parseListenAddress(bad)).toEqual({ error: expect.stringContaining("--api-listen") });
  }
});

test("run refuses a malformed --api-listen as a usage error before anything starts", async () => {
  using dir = tempDir();
  const stderr: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (stderr.push(String(chunk)), true)) as never;
  try {
    expect(await runCLI(["run", "--manifests", dir.path, "--db", join(dir.path, "state.db"), "--api-listen", "6443"])).toBe(2);
  } finally {
    process.stderr.write = original;
  }
  expect(stderr.join("")).toBe('error: --api-listen must be HOST:PORT or off (got "6443")\n');
  expect(existsSync(join(dir.path, "state.db"))).toBe(false);
});

test("kubeconfig: the CA, the recorded address, the token and namespace default", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const credentials = ensureCredentials(db);
  recordServerAddress(db, "https://127.0.0.1:6443");
  const config = parse(kubeconfigText(db));
  expect(config).toEqual({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "minikubelet", cluster: { server: "https://127.0.0.1:6443", "certificate-authority-data": Buffer.from(credentials.caPem).toString("base64") } }],
    users: [{ name: "minikubelet-admin", user: { token: credentials.token } }],
    contexts: [{ name: "minikubelet", context: { cluster: "minikubelet", user: "minikubelet-admin", namespace: "default" } }],
    "current-context": "minikubelet",
  });
});

test("kubeconfig before any API listened says what to start", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  expect(() => kubeconfigText(db)).toThrow(`no API has listened for ${db} yet (nothing in ${db}.api): start "minikubelet run" or "minikubelet serve" on it first`);
});

test("serve on a database that does not exist says so and leaves nothing behind", async () => {
  using dir = tempDir();
  const db = join(dir.path, "missing.db");
  await expect(serveCommand({ db, apiListen: "127.0.0.1:0" }, Promise.resolve())).rejects.toThrow(db);
  expect(readdirSync(dir.path)).toEqual([]);
});
