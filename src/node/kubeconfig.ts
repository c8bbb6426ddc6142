/**
 * The node's credentials for `run --kubeconfig FILE`, read as client-go's clientcmd reads a
 * kubeconfig: the current context (or the only one) names a cluster and a user; a cluster gives the
 * server and the CA that signs it, a user a client certificate and key (the kubelet's identity,
 * `system:node:NAME` in group `system:nodes`) or a bearer token. File paths are relative to the
 * kubeconfig's own directory, as clientcmd resolves them. A problem names the file and the field.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";

export interface ClusterCredentials {
  /** The kubeconfig it came from, for messages. */
  file: string;
  /** `https://127.0.0.1:6443`, without a trailing slash. */
  server: string;
  /** PEM of the CA that signs the API server's certificate; undefined trusts the system's roots. */
  ca?: string;
  /** `insecure-skip-tls-verify: true`. */
  insecure: boolean;
  /** PEM client certificate and key (TLS client authentication). */
  cert?: string;
  key?: string;
  token?: string;
}

export class KubeconfigError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
  ) {
    super(`${file}: ${field === "" ? "" : `${field}: `}${problem}`);
    this.name = "KubeconfigError";
  }
}

type Named<T> = { name?: unknown } & T;

/** Reads and checks `file`; throws KubeconfigError naming the field at fault. */
export function readKubeconfig(file: string): ClusterCredentials {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new KubeconfigError(file, "", `cannot be read: ${(error as Error).message}`);
  }
  let config: unknown;
  try {
    config = parse(text);
  } catch (error) {
    throw new KubeconfigError(file, "", `is not YAML: ${(error as Error).message}`);
  }
  return credentialsOf(config, file);
}

/** The credentials a decoded kubeconfig selects (exported for tests). */
export function credentialsOf(config: unknown, file: string): ClusterCredentials {
  const fail = (field: string, problem: string): never => {
    throw new KubeconfigError(file, field, problem);
  };
  if (!isObject(config)) return fail("", "is not a kubeconfig (a YAML mapping)");
  const contexts = namedList<{ context?: unknown }>(config, "contexts", fail);
  const current = typeof config["current-context"] === "string" ? config["current-context"] : "";
  let contextIndex = contexts.findIndex((entry) => entry.name === current);
  if (contextIndex < 0) {
    if (current !== "") fail("current-context", `no context named ${JSON.stringify(current)}`);
    if (contexts.length !== 1) fail("current-context", contexts.length === 0 ? "no contexts" : "not set, and there is more than one context");
    contextIndex = 0;
  }
  const contextPath = `contexts[${contextIndex}].context`;
  const context = contexts[contextIndex]!.context;
  if (!isObject(context)) return fail(contextPath, "required");
  const clusterName = stringField(context, "cluster", contextPath, fail, true)!;
  const userName = stringField(context, "user", contextPath, fail, false) ?? "";

  const clusters = namedList<{ cluster?: unknown }>(config, "clusters", fail);
  const clusterIndex = clusters.findIndex((entry) => entry.name === clusterName);
  if (clusterIndex < 0) fail(`${contextPath}.cluster`, `no cluster named ${JSON.stringify(clusterName)}`);
  const clusterPath = `clusters[${clusterIndex}].cluster`;
  const cluster = clusters[clusterIndex]!.cluster;
  if (!isObject(cluster)) return fail(clusterPath, "required");
  const given = stringField(cluster, "server", clusterPath, fail, true)!;
  // client-go's DefaultServerURL: a host without a scheme is reached over TLS.
  const server = given.includes("://") ? given : `https://${given}`;
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return fail(`${clusterPath}.server`, `not a URL: ${JSON.stringify(given)}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") fail(`${clusterPath}.server`, `not an http(s) URL: ${JSON.stringify(given)}`);

  const base = dirname(resolve(file));
  const ca = dataOrFile(cluster, "certificate-authority", clusterPath, base, fail);
  const credentials: ClusterCredentials = { file, server: server.replace(/\/+$/, ""), insecure: cluster["insecure-skip-tls-verify"] === true, ...(ca !== undefined && { ca }) };

  if (userName !== "") {
    const users = namedList<{ user?: unknown }>(config, "users", fail);
    const userIndex = users.findIndex((entry) => entry.name === userName);
    if (userIndex < 0) fail(`${contextPath}.user`, `no user named ${JSON.stringify(userName)}`);
    const userPath = `users[${userIndex}].user`;
    const user = users[userIndex]!.user;
    if (!isObject(user)) return fail(userPath, "required");
    const cert = dataOrFile(user, "client-certificate", userPath, base, fail);
    const key = dataOrFile(user, "client-key", userPath, base, fail);
    if ((cert === undefined) !== (key === undefined)) fail(userPath, "client-certificate and client-key go together: only one is set");
    let token = stringField(user, "token", userPath, fail, false);
    const tokenFile = stringField(user, "tokenFile", userPath, fail, false);
    if (token === undefined && tokenFile !== undefined) token = readOrFail(resolve(base, tokenFile), `${userPath}.tokenFile`, fail).trim();
    Object.assign(credentials, cert !== undefined && { cert, key }, token !== undefined && { token });
  }
  if (credentials.cert === undefined && credentials.token === undefined) fail(`${contextPath}.user`, "no client certificate or token: a node must authenticate as system:node:NAME");
  return credentials;
}

function namedList<T>(config: Record<string, unknown>, field: string, fail: (field: string, problem: string) => never): Named<T>[] {
  const list = config[field] ?? [];
  if (!Array.isArray(list)) return fail(field, "must be a list");
  list.forEach((entry, index) => {
    if (!isObject(entry)) fail(`${field}[${index}]`, "must be a mapping");
  });
  return list as Named<T>[];
}

function stringField(object: Record<string, unknown>, field: string, path: string, fail: (field: string, problem: string) => never, required: boolean): string | undefined {
  const value = object[field];
  if (value === undefined || value === null || value === "") return required ? fail(`${path}.${field}`, "required") : undefined;
  if (typeof value !== "string") return fail(`${path}.${field}`, "must be a string");
  return value;
}

/** `NAME-data` (base64) or `NAME` (a file path), as clientcmd takes either. */
function dataOrFile(object: Record<string, unknown>, field: string, path: string, base: string, fail: (field: string, problem: string) => never): string | undefined {
  const data = stringField(object, `${field}-data`, path, fail, false);
  if (data !== undefined) {
    const decoded = Buffer.from(data, "base64").toString("utf8");
    if (!decoded.includes("-----BEGIN")) fail(`${path}.${field}-data`, "is not base64 of a PEM block");
    return decoded;
  }
  const file = stringField(object, field, path, fail, false);
  return file === undefined ? undefined : readOrFail(resolve(base, file), `${path}.${field}`, fail);
}

function readOrFail(file: string, field: string, fail: (field: string, problem: string) => never): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    return fail(field, `cannot read ${file}: ${(error as Error).message}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
