/**
 * `run --kubeconfig FILE`: the node's credentials read as clientcmd reads them, and every problem
 * named by the file and the field at fault.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { credentialsOf, KubeconfigError, readKubeconfig } from "../../src/node/kubeconfig.ts";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";
const b64 = (text: string) => Buffer.from(text).toString("base64");

function config(overrides: Record<string, unknown> = {}) {
  return {
    apiVersion: "v1",
    kind: "Config",
    "current-context": "node",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443/", "certificate-authority-data": b64(PEM) } }],
    users: [{ name: "n1", user: { "client-certificate-data": b64(PEM), "client-key-data": b64(KEY) } }],
    contexts: [{ name: "node", context: { cluster: "c", user: "n1" } }],
    ...overrides,
  };
}

function problem(value: unknown): string {
  try {
    credentialsOf(value, "node.kubeconfig");
  } catch (error) {
    expect(error).toBeInstanceOf(KubeconfigError);
    return (error as Error).message;
  }
  throw new Error("accepted");
}

test("the current context's cluster and user: server without its trailing slash, CA, client certificate and key", () => {
  expect(credentialsOf(config(), "node.kubeconfig")).toEqual({ file: "node.kubeconfig", server: "https://127.0.0.1:6443", ca: PEM, insecure: false, cert: PEM, key: KEY });
});

test("a server without a scheme is reached over TLS, as client-go's DefaultServerURL has it", () => {
  expect(credentialsOf(config({ clusters: [{ name: "c", cluster: { server: "127.0.0.1:6443" } }] }), "kc").server).toBe("https://127.0.0.1:6443");
});

test("files are read relative to the kubeconfig's directory, and a token from tokenFile", () => {
  const dir = mkdtempSync(join(tmpdir(), "kubeconfig-"));
  try {
    writeFileSync(join(dir, "ca.crt"), PEM);
    writeFileSync(join(dir, "token"), "s3cret\n");
    writeFileSync(
      join(dir, "kc"),
      stringify(config({ clusters: [{ name: "c", cluster: { server: "https://h:1", "certificate-authority": "ca.crt" } }], users: [{ name: "n1", user: { tokenFile: "token" } }] })),
    );
    expect(readKubeconfig(join(dir, "kc"))).toEqual({ file: join(dir, "kc"), server: "https://h:1", ca: PEM, insecure: false, token: "s3cret" });
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test.each([
  ["a missing context", config({ "current-context": "other" }), "node.kubeconfig: current-context: no context named \"other\""],
  ["no current context among two", config({ "current-context": undefined, contexts: [{ name: "a", context: { cluster: "c" } }, { name: "b", context: { cluster: "c" } }] }), "current-context: not set, and there is more than one context"],
  ["a context naming no cluster", config({ contexts: [{ name: "node", context: { cluster: "x", user: "n1" } }] }), "contexts[0].context.cluster: no cluster named \"x\""],
  ["a server that is no http(s) URL", config({ clusters: [{ name: "c", cluster: { server: "ftp://127.0.0.1:6443" } }] }), "clusters[0].cluster.server: not an http(s) URL: \"ftp://127.0.0.1:6443\""],
  ["a certificate without its key", config({ users: [{ name: "n1", user: { "client-certificate-data": b64(PEM) } }] }), "users[0].user: client-certificate and client-key go together"],
  ["no credentials at all", config({ users: [{ name: "n1", user: {} }] }), "contexts[0].context.user: no client certificate or token"],
  ["data that is not base64 PEM", config({ users: [{ name: "n1", user: { "client-certificate-data": "bm9wZQ==", "client-key-data": b64(KEY) } }] }), "users[0].user.client-certificate-data: is not base64 of a PEM block"],
  ["not a mapping", ["a"], "node.kubeconfig: is not a kubeconfig"],
])("%s is refused naming the field", (_name, value, message) => {
  expect(problem(value)).toContain(message);
});

test("a file that cannot be read or parsed is named", () => {
  expect(() => readKubeconfig("/nonexistent/kc")).toThrow("/nonexistent/kc: cannot be read");
});
