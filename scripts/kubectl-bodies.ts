/**
 * Records the request bodies real kubectl sends for its writes, byte for byte, the way they reach an
 * API server: a throwaway plain-HTTP API on loopback that serves just enough (discovery, one pod,
 * one node) for each command to get to its write, answers every write with a plausible object and
 * writes what it received to OUTDIR/<kubectl version>/<command>.<n>.bin with its headers beside it
 * (.json). test/fixtures/kubectl-bodies/ was made with it; the unit tests decode those bytes.
 *
 *   node_modules/.bin/bun scripts/kubectl-bodies.ts OUTDIR [1.27 1.33 ...] [--pod FILE]
 *
 * --pod serves FILE's Pod as `web` (the pod the `debug --copy-to` commands copy) instead of the
 * built-in one. Only loopback is ever contacted.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const KUBECTL_DIR = "/usr/lib/google-cloud-sdk/bin";

/** The pod the agent serves for `web` (kubectl debug reads it, then writes its copy). */
export const SERVED_POD = {
  kind: "Pod",
  apiVersion: "v1",
  metadata: {
    name: "web",
    namespace: "default",
    uid: "2f3b9a4e-0d1c-4c57-9a51-6f0e7c1d2b3a",
    resourceVersion: "7",
    creationTimestamp: "2025-01-02T03:04:05Z",
    labels: { app: "web" },
    annotations: { "kubernetes.io/config.source": "api" },
  },
  spec: {
    containers: [
      {
        name: "web",
        image: "busybox",
        command: ["sleep", "600"],
        env: [{ name: "GREETING", value: "hello" }],
        ports: [{ name: "http", containerPort: 8080, protocol: "TCP" }],
        resources: { limits: { cpu: "500m", memory: "64Mi" }, requests: { cpu: "500m", memory: "64Mi" } },
        readinessProbe: { httpGet: { path: "/ready", port: "http", scheme: "HTTP" }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 },
        terminationMessagePath: "/dev/termination-log",
        terminationMessagePolicy: "File",
        imagePullPolicy: "Always",
      },
    ],
    restartPolicy: "Always",
    terminationGracePeriodSeconds: 30,
    dnsPolicy: "ClusterFirst",
    nodeName: "lab",
    securityContext: {},
    schedulerName: "default-scheduler",
    enableServiceLinks: true,
    preemptionPolicy: "PreemptLowerPriority",
    priority: 0,
  },
  status: { phase: "Running", qosClass: "Guaranteed" },
};

const SERVED_NODE = {
  kind: "Node",
  apiVersion: "v1",
  metadata: { name: "lab", uid: "9c1e3f2a-5b6d-4e7f-8a9b-0c1d2e3f4a5b", resourceVersion: "3", labels: { "kubernetes.io/hostname": "lab" } },
  spec: {},
  status: { conditions: [{ type: "Ready", status: "True" }] },
};

/** The commands recorded, each a name (the fixture's) and kubectl's arguments. */
export const COMMANDS: readonly (readonly [name: string, args: readonly string[]])[] = [
  ["debug-node", ["debug", "node/lab", "--image=busybox", "--", "sleep", "60"]],
  ["debug-node-general", ["debug", "node/lab", "--image=busybox", "--profile=general", "--", "sleep", "60"]],
  ["debug-copy", ["debug", "web", "--copy-to=web-copy", "--image=busybox", "--", "sleep", "60"]],
  ["debug-copy-set-image", ["debug", "web", "--copy-to=web-copy", "--set-image=*=busybox"]],
  ["debug-copy-replace", ["debug", "web", "--copy-to=web-copy", "--replace", "--image=busybox", "--", "sleep", "60"]],
  ["create-namespace", ["create", "namespace", "lab-ns"]],
  ["auth-can-i", ["auth", "can-i", "create", "pods", "--subresource=exec", "-n", "default"]],
  ["auth-can-i-list", ["auth", "can-i", "--list", "-n", "default"]],
  ["auth-whoami", ["auth", "whoami"]],
  ["run", ["run", "runner", "--image=busybox", "--restart=Never", "--", "sleep", "60"]],
  ["delete-pod", ["delete", "pod", "web", "--wait=false"]],
];

interface Recorded {
  method: string;
  path: string;
  query: string;
  contentType: string | null;
  accept: string | null;
  bytes: number;
}

function resourceList(groupVersion: string, resources: object[]) {
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion, resources };
}
const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];
const DISCOVERY: Record<string, object> = {
  "/api": { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "127.0.0.1" }] },
  "/apis": {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: ["authorization.k8s.io", "authentication.k8s.io", "policy"].map((name) => ({ name, versions: [{ groupVersion: `${name}/v1`, version: "v1" }], preferredVersion: { groupVersion: `${name}/v1`, version: "v1" } })),
  },
  "/api/v1": resourceList("v1", [
    { name: "pods", singularName: "pod", namespaced: true, kind: "Pod", verbs: ALL_VERBS, shortNames: ["po"] },
    { name: "pods/ephemeralcontainers", singularName: "", namespaced: true, kind: "Pod", verbs: ["get", "patch", "update"] },
    { name: "pods/eviction", singularName: "", namespaced: true, group: "policy", version: "v1", kind: "Eviction", verbs: ["create"] },
    { name: "pods/exec", singularName: "", namespaced: true, kind: "PodExecOptions", verbs: ["create", "get"] },
    { name: "nodes", singularName: "node", namespaced: false, kind: "Node", verbs: ALL_VERBS, shortNames: ["no"] },
    { name: "namespaces", singularName: "namespace", namespaced: false, kind: "Namespace", verbs: ["create", "delete", "get", "list", "patch", "update", "watch"], shortNames: ["ns"] },
  ]),
  "/apis/authorization.k8s.io/v1": resourceList("authorization.k8s.io/v1", [
    { name: "selfsubjectaccessreviews", singularName: "selfsubjectaccessreview", namespaced: false, kind: "SelfSubjectAccessReview", verbs: ["create"] },
    { name: "selfsubjectrulesreviews", singularName: "selfsubjectrulesreview", namespaced: false, kind: "SelfSubjectRulesReview", verbs: ["create"] },
  ]),
  "/apis/authentication.k8s.io/v1": resourceList("authentication.k8s.io/v1", [
    { name: "selfsubjectreviews", singularName: "selfsubjectreview", namespaced: false, kind: "SelfSubjectReview", verbs: ["create"] },
  ]),
  "/apis/policy/v1": resourceList("policy/v1", []),
  "/version": { major: "1", minor: "33", gitVersion: "v1.33.0", platform: "linux/amd64" },
};

/** What a write is answered with: an object of the kind the client expects back. */
function writeAnswer(method: string, path: string, pod: object): [number, object] {
  if (path.endsWith("/selfsubjectaccessreviews")) return [201, { kind: "SelfSubjectAccessReview", apiVersion: "authorization.k8s.io/v1", metadata: {}, spec: {}, status: { allowed: true } }];
  if (path.endsWith("/selfsubjectrulesreviews")) return [201, { kind: "SelfSubjectRulesReview", apiVersion: "authorization.k8s.io/v1", metadata: {}, spec: {}, status: { resourceRules: [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }], nonResourceRules: [], incomplete: false } }];
  if (path.endsWith("/selfsubjectreviews")) return [201, { kind: "SelfSubjectReview", apiVersion: "authentication.k8s.io/v1", metadata: {}, status: { userInfo: { username: "admin", groups: ["system:masters"] } } }];
  if (path === "/api/v1/namespaces") return [201, { kind: "Namespace", apiVersion: "v1", metadata: { name: "lab-ns", uid: "0", resourceVersion: "1" }, spec: {}, status: { phase: "Active" } }];
  if (path.endsWith("/eviction")) return [201, { kind: "Status", apiVersion: "v1", status: "Success" }];
  if (method === "DELETE") return [200, pod];
  return [201, { ...pod, metadata: { ...(pod as { metadata: object }).metadata, name: "created" } }];
}

/** Serves the throwaway API until the returned stop(); every write's body lands in `record`. */
export function serveRecorder(pod: object, record: (entry: Recorded, body: Uint8Array) => void) {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const json = (status: number, body: object) => Response.json(body, { status });
      if (request.method === "GET") {
        const discovered = DISCOVERY[url.pathname];
        if (discovered) return json(200, discovered);
        if (url.pathname === "/api/v1/namespaces/default/pods/web") return json(200, pod);
        if (url.pathname === "/api/v1/nodes/lab") return json(200, SERVED_NODE);
        if (url.pathname.startsWith("/api/v1/namespaces/") && url.pathname.split("/").length === 5) {
          return json(200, { kind: "Namespace", apiVersion: "v1", metadata: { name: url.pathname.split("/")[4] }, status: { phase: "Active" } });
        }
        return json(404, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404, message: `${url.pathname} not found`, details: {} });
      }
      const body = new Uint8Array(await request.arrayBuffer());
      record({ method: request.method, path: url.pathname, query: url.search, contentType: request.headers.get("content-type"), accept: request.headers.get("accept"), bytes: body.length }, body);
      const [status, answer] = writeAnswer(request.method, url.pathname, pod);
      return json(status, answer);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

function kubeconfig(server: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters: [{name: rec, cluster: {server: " + JSON.stringify(server) + "}}]",
    "users: [{name: rec, user: {}}]",
    "contexts: [{name: rec, context: {cluster: rec, user: rec, namespace: default}}]",
    "current-context: rec",
    "",
  ].join("\n");
}

export interface RecordedRun {
  name: string;
  status: number;
  stderr: string;
  writes: { entry: Recorded; body: Uint8Array }[];
}

/** Runs each command with `binary` against a fresh recorder, one after the other; what each one wrote, by command name. */
export async function recordCommands(binary: string, pod: object, commands: readonly (readonly [string, readonly string[]])[] = COMMANDS): Promise<RecordedRun[]> {
  const runs: RecordedRun[] = [];
  for (const [name, args] of commands) {
    const writes: RecordedRun["writes"] = [];
    const recorder = serveRecorder(pod, (entry, body) => writes.push({ entry, body }));
    const dir = mkdtempSync(join(tmpdir(), "kubectl-bodies-"));
    try {
      writeFileSync(join(dir, "kubeconfig"), kubeconfig(recorder.url));
      // A child process: this one serves it meanwhile.
      const child = Bun.spawn([binary, "--kubeconfig", join(dir, "kubeconfig"), "--cache-dir", join(dir, "cache"), ...args], {
        env: { PATH: "/usr/bin:/bin", HOME: dir, TZ: "UTC" },
        stdout: "ignore",
        stderr: "pipe",
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      clearTimeout(timer);
      runs.push({ name, status, stderr, writes });
    } finally {
      recorder.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return runs;
}

async function main(argv: string[]): Promise<void> {
  const podFlag = argv.indexOf("--pod");
  const pod = podFlag >= 0 ? JSON.parse(readFileSync(argv[podFlag + 1]!, "utf8")) : SERVED_POD;
  const rest = podFlag >= 0 ? argv.filter((_, i) => i !== podFlag && i !== podFlag + 1) : argv;
  const [outDir, ...versions] = rest;
  if (!outDir) throw new Error("usage: kubectl-bodies.ts OUTDIR [VERSION...] [--pod FILE]");
  for (const version of versions.length > 0 ? versions : ["1.27", "1.33"]) {
    const binary = join(KUBECTL_DIR, `kubectl.${version}`);
    if (!existsSync(binary)) throw new Error(`no ${binary}`);
    const dir = join(outDir, version);
    mkdirSync(dir, { recursive: true });
    for (const run of await recordCommands(binary, pod)) {
      run.writes.forEach(({ entry, body }, index) => {
        const base = join(dir, `${run.name}.${index + 1}`);
        writeFileSync(`${base}.bin`, body);
        writeFileSync(`${base}.json`, JSON.stringify({ kubectl: version, command: COMMANDS.find(([name]) => name === run.name)![1], ...entry }, null, 2) + "\n");
      });
      const writes = run.writes.map(({ entry }) => `${entry.method} ${entry.path} ${entry.contentType} ${entry.bytes}B`).join("; ") || "no write";
      console.log(`${version} ${run.name}: exit ${run.status}, ${writes}${run.status !== 0 ? ` (${run.stderr.trim().split("\n").pop()})` : ""}`);
    }
  }
}

if (import.meta.main) await main(process.argv.slice(2));
