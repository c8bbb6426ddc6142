/** The API's CA, serving certificate and token: made once next to the database, private, reused. */
import { expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import forge from "node-forge";
import { apiDirOf, ensureCredentials, readServerAddress, recordServerAddress } from "../../src/api/http/tls.ts";
import { tempDir } from "../store-fixtures.ts";

function sanOf(certPem: string): string[] {
  const san = forge.pki.certificateFromPem(certPem).getExtension("subjectAltName") as { altNames: { ip?: string; value?: string }[] };
  return san.altNames.map((name) => name.ip ?? name.value ?? "");
}

function verifies(caPem: string, certPem: string): boolean {
  return forge.pki.verifyCertificateChain(forge.pki.createCaStore([caPem]), [forge.pki.certificateFromPem(certPem)]);
}

test("first use creates the CA, a serving certificate for loopback and a token in <db>.api, keys private", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const credentials = ensureCredentials(db);
  expect(credentials.dir).toBe(`${db}.api`);
  expect(readdirSync(apiDirOf(db)).sort()).toEqual(["ca.crt", "ca.key", "server.crt", "server.key", "token"]);
  for (const secret of ["ca.key", "server.key", "token"]) expect(statSync(join(apiDirOf(db), secret)).mode & 0o777).toBe(0o600);
  expect(statSync(apiDirOf(db)).mode & 0o777).toBe(0o700);
  expect(sanOf(credentials.certPem)).toEqual(expect.arrayContaining(["127.0.0.1", "localhost"]));
  expect(verifies(credentials.caPem, credentials.certPem)).toBe(true);
  expect(credentials.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // Nothing half-made is left beside it.
  expect(readdirSync(dir.path)).toEqual(["state.db.api"]);
});

test("a later start reuses everything, so a printed kubeconfig keeps working", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const first = ensureCredentials(db);
  expect(ensureCredentials(db)).toEqual(first);
  expect(ensureCredentials(db, "::1")).toEqual(first);
});

test("a listen host the certificate does not name gets a serving certificate from the same CA; CA and token stay", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const first = ensureCredentials(db);
  const wider = ensureCredentials(db, "192.0.2.10");
  expect(wider.caPem).toBe(first.caPem);
  expect(wider.token).toBe(first.token);
  expect(sanOf(wider.certPem)).toEqual(expect.arrayContaining(["127.0.0.1", "localhost", "192.0.2.10"]));
  expect(verifies(first.caPem, wider.certPem)).toBe(true);
  expect(ensureCredentials(db, "192.0.2.10")).toEqual(wider);
});

test("a wildcard listen address gets every address of this host named, once", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const wildcard = ensureCredentials(db, "0.0.0.0");
  const own = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).filter((entry) => entry.family === "IPv4").map((entry) => entry.address));
  expect(sanOf(wildcard.certPem)).toEqual(expect.arrayContaining(own));
  expect(ensureCredentials(db, "0.0.0.0")).toEqual(wildcard);
});

test("the recorded server address is read back for kubeconfig", () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  expect(readServerAddress(db)).toBeUndefined();
  ensureCredentials(db);
  recordServerAddress(db, "https://127.0.0.1:6443");
  expect(readServerAddress(db)).toBe("https://127.0.0.1:6443");
});

test("two processes starting at once on one database end up with the same credentials", async () => {
  using dir = tempDir();
  const db = join(dir.path, "state.db");
  const script = `import { ensureCredentials } from ${JSON.stringify(join(import.meta.dir, "../../src/api/http/tls.ts"))};\nprocess.stdout.write(ensureCredentials(${JSON.stringify(db)}).token);\n`;
  const children = Array.from({ length: 4 }, () => Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" }));
  const tokens = await Promise.all(children.map(async (child) => {
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    return out;
  }));
  expect(new Set(tokens).size).toBe(1);
  expect(tokens[0]).toBe(ensureCredentials(db).token);
  expect(readdirSync(dir.path)).toEqual(["state.db.api"]);
}, 30_000);
