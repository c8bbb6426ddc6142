/**
 * What the node-mode tests (test/cluster) share: the real control plane scripts/test starts with
 * scripts/cluster-env (Kubernetes v1.37.2 built from its Go modules), its admin kubeconfig and
 * kubectl, and a node kubeconfig per node name. Without one: under CI=true a single failing test
 * says why (the cluster tests must run in CI); elsewhere the block is skipped with the reason.
 */
import { describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

export interface ClusterEnv {
  dir: string;
  server: string;
  /** Where kubectl v1.37.2 and the control plane's binaries are. */
  bin: string;
  admin: string;
}

const ROOT = resolve(import.meta.dir, "..");

function clusterEnv(): ClusterEnv | string {
  const dir = process.env.MINIKUBELET_CLUSTER_DIR;
  const server = process.env.MINIKUBELET_CLUSTER_SERVER;
  const bin = process.env.MINIKUBELET_CLUSTER_BIN;
  if (!dir || !server || !bin) return "no control plane: run `eval \"$(./scripts/cluster-env up)\"` (scripts/test does)";
  const admin = join(dir, "admin.kubeconfig");
  if (!existsSync(admin)) return `${admin} is missing: is the control plane in ${dir} up?`;
  return { dir, server, bin, admin };
}

/** `describe` for tests that need the control plane. */
export function describeCluster(name: string, body: (env: ClusterEnv) => void): void {
  const env = clusterEnv();
  if (typeof env !== "string") return describe(name, () => body(env));
  if (process.env.CI === "true") {
    describe(name, () => {
      test("the control plane is available (required under CI=true)", () => {
        throw new Error(`CI=true requires the cluster tests to run, but ${env}`);
      });
    });
    return;
  }
  console.warn(`[cluster tests skipped] ${name}: ${env}`);
  describe.skip(name, () => body(undefined as never));
}

/** The kubeconfig (client certificate CN=system:node:NAME) and serving certificate of node `name`. */
export function nodeCredentials(env: ClusterEnv, name: string): { kubeconfig: string; cert: string; key: string } {
  const result = Bun.spawnSync([join(ROOT, "scripts/cluster-env"), "node-kubeconfig", name], { env: { ...process.env, MINIKUBELET_CLUSTER_DIR: env.dir }, stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`cluster-env node-kubeconfig ${name}: ${result.stderr.toString()}`);
  return { kubeconfig: join(env.dir, `node-${name}.kubeconfig`), cert: join(env.dir, `node-${name}.crt`), key: join(env.dir, `node-${name}.key`) };
}

/** Runs the cluster's kubectl as the admin; returns its output, or throws with its stderr. */
export function kubectl(env: ClusterEnv, ...args: string[]): string {
  const result = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, ...args], { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`kubectl ${args.join(" ")}: exit ${result.exitCode}: ${result.stderr.toString().trim()}`);
  return result.stdout.toString();
}

/** The admin's view of an object as JSON. */
export function getJson<T = Record<string, any>>(env: ClusterEnv, ...args: string[]): T {
  return JSON.parse(kubectl(env, "get", ...args, "-o", "json")) as T;
}

/** `kubectl apply` of one object as the admin. */
export function applyObject(env: ClusterEnv, object: unknown): void {
  const result = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "apply", "-f", "-"], { stdin: Buffer.from(JSON.stringify(object)), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`kubectl apply: exit ${result.exitCode}: ${result.stderr.toString().trim()}`);
}

/**
 * After a test file's agent: its namespace's pods (nothing left Terminating for a node that is
 * gone), the namespace and the Node go from the cluster, and its containers (which outlive a
 * stopped agent, as pods do) are killed with the workspace.
 */
export function removeNodeAndPods(env: ClusterEnv, node: string, namespace: string, ws: { path: string; cleanup(): void } | undefined, killContainers: (root: string) => void): void {
  const admin = (...args: string[]) => Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, ...args], { stdout: "pipe", stderr: "pipe" });
  admin("delete", "pods", "--all", "-n", namespace, "--force", "--grace-period=0");
  admin("delete", "namespace", namespace, "--wait=false");
  admin("delete", "node", node, "--wait=false");
  if (ws) {
    killContainers(ws.path);
    ws.cleanup();
  }
}

/** The admin's view of an object as JSON, or undefined when the API server has none. */
export function tryGetJson(env: ClusterEnv, ...args: string[]): Record<string, any> | undefined {
  const result = Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "get", ...args, "-o", "json"], { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) {
    if (result.stderr.toString().includes("NotFound")) return undefined;
    throw new Error(`kubectl get ${args.join(" ")}: ${result.stderr.toString().trim()}`);
  }
  return JSON.parse(result.stdout.toString());
}

/**
 * Where the Go module cache holds k8s.io/kubernetes at the version test/cluster/go.mod requires,
 * downloaded if missing (building the control plane downloads it anyway).
 */
export function kubernetesModuleDir(): string {
  const result = Bun.spawnSync(["go", "mod", "download", "-json", "k8s.io/kubernetes"], { cwd: join(ROOT, "test/cluster"), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`go mod download k8s.io/kubernetes: ${result.stderr.toString().trim()}`);
  const dir = (JSON.parse(result.stdout.toString()) as { Dir?: string }).Dir;
  if (!dir) throw new Error("go mod download gave no Dir for k8s.io/kubernetes");
  return dir;
}
