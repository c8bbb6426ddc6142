/**
 * What a cluster pod references, end to end: the compiled agent joins as node `objs-4` on the
 * process runtime and runs a pod bound to it that takes a Secret's key as env, mounts a ConfigMap
 * (edited while it runs), and lists its namespace's pods with the token of the ServiceAccount
 * admission's `kube-api-access-*` volume; and a pod whose Secret does not exist yet waits in
 * CreateContainerConfigError, as the API server shows, until the Secret is created. All of it is read
 * back through the admin's kubectl (`logs` through the API server to the node's kubelet port).
 *
 * The process runtime hands a volume whose mountPath does not exist on the host over in
 * MINIKUBELET_VOLUME_<NAME>; the API server is reached at its own address (the `kubernetes`
 * Service's cluster IP has no proxy on this host).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv, removeNodeAndPods, tryGetJson } from "../cluster-fixtures.ts";
import { Agent, ensureBinary, freePort, isRunning, killRecordedContainers, processesMentioning, waitFor, Workspace } from "../e2e/helpers.ts";

const NODE = "objs-4";
/** A namespace of this run's own: the last run's may still be going away. */
const NS = `node-objs-${Date.now().toString(36)}`;
const SA = "lister";

const SCRIPT = `
echo "password=$PASSWORD"
CFG="$MINIKUBELET_VOLUME_CONFIG/greeting"
echo "greeting=$(cat "$CFG")"
SA_DIR=$(env | sed -n 's/^MINIKUBELET_VOLUME_KUBE_API_ACCESS_[A-Z0-9_]*=//p' | head -n 1)
curl -sS --cacert "$SA_DIR/ca.crt" -H "Authorization: Bearer $(cat "$SA_DIR/token")" "$API_SERVER/api/v1/namespaces/$(cat "$SA_DIR/namespace")/pods" | grep -o '"name": *"reader"' | head -n 1
echo "service=$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"
echo listed
while [ "$(cat "$CFG")" = hello ]; do sleep 0.1; done
echo "greeting=$(cat "$CFG")"
`;


describeCluster("node mode: a cluster pod's ConfigMaps, Secrets and token, through the agent", (env) => {
  let ws: Workspace;
  let agent: Agent;

  const apply = (name: string, object: unknown) => {
    const file = join(ws.path, `${name}.json`);
    writeFileSync(file, JSON.stringify(object));
    kubectl(env, "apply", "-f", file);
  };
  const logs = (pod: string) => Bun.spawnSync([join(env.bin, "kubectl"), "--kubeconfig", env.admin, "logs", pod, "-n", NS], { stdout: "pipe", stderr: "pipe" }).stdout.toString();

  beforeAll(async () => {
    ensureBinary();
    ws = new Workspace();
    const credentials = nodeCredentials(env, NODE);
    kubectl(env, "create", "namespace", NS);
    kubectl(env, "create", "serviceaccount", SA, "-n", NS);
    kubectl(env, "create", "role", SA, "-n", NS, "--verb=list", "--resource=pods");
    kubectl(env, "create", "rolebinding", SA, "-n", NS, "--role", SA, `--serviceaccount=${NS}:${SA}`);
    apply("config", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "app-config", namespace: NS }, data: { greeting: "hello" } });
    apply("secret", { apiVersion: "v1", kind: "Secret", metadata: { name: "app-secret", namespace: NS }, stringData: { password: "s3cret" } });
    const port = await freePort();
    agent = new Agent(ws, ["--kubeconfig", credentials.kubeconfig, "--kubelet-listen", `127.0.0.1:${port}`, "--tls-cert-file", credentials.cert, "--tls-private-key-file", credentials.key], { node: NODE });
    await waitFor("the Node registered and Ready", () => tryGetJson(env, "node", NODE)?.status?.conditions?.some((c: { type: string; status: string }) => c.type === "Ready" && c.status === "True"), 20_000, () => agent.stdout + agent.stderr);
  });

  afterAll(async () => {
    await agent?.terminate();
    removeNodeAndPods(env, NODE, NS, ws, (root) => {
      killRecordedContainers(root);
      for (const left of processesMentioning(root)) if (isRunning(left.pid)) process.kill(left.pid, "SIGKILL");
    });
  });

  test("a Secret as env, a ConfigMap file that follows an edit, and the pod's own token listing pods", async () => {
    apply("reader", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "reader", namespace: NS },
      spec: {
        nodeName: NODE,
        serviceAccountName: SA,
        restartPolicy: "Never",
        containers: [
          {
            name: "reader",
            image: "busybox",
            command: ["sh", "-c", SCRIPT],
            env: [
              { name: "PASSWORD", valueFrom: { secretKeyRef: { name: "app-secret", key: "password" } } },
              { name: "API_SERVER", value: env.server },
            ],
            volumeMounts: [{ name: "config", mountPath: "/etc/reader-config" }],
          },
        ],
        volumes: [{ name: "config", configMap: { name: "app-config" } }],
      },
    });
    const served = getJson(env, "pod", "reader", "-n", NS);
    expect(served.spec.volumes.map((v: { name: string }) => v.name)).toContainEqual(expect.stringMatching(/^kube-api-access-/));
    await waitFor("reader listed the pods", () => logs("reader").includes("listed"), 30_000, () => `${agent.stdout}${agent.stderr}\n${JSON.stringify(tryGetJson(env, "pod", "reader", "-n", NS)?.status)}`);
    kubectl(env, "patch", "configmap", "app-config", "-n", NS, "--type=merge", "-p", JSON.stringify({ data: { greeting: "bonjour" } }));
    await waitFor("reader Succeeded", () => tryGetJson(env, "pod", "reader", "-n", NS)?.status?.phase === "Succeeded", 20_000, () => logs("reader"));
    const kubernetes = getJson(env, "service", "kubernetes", "-n", "default");
    expect(logs("reader").trim().split("\n")).toEqual([
      "password=s3cret",
      "greeting=hello",
      '"name": "reader"',
      `service=${kubernetes.spec.clusterIP}:${kubernetes.spec.ports[0].port}`,
      "listed",
      "greeting=bonjour",
    ]);
  });

  test("a Secret that does not exist yet: CreateContainerConfigError in the API server, then Running once it is created", async () => {
    apply("waiter", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "waiter", namespace: NS },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        containers: [{ name: "waiter", image: "busybox", command: ["sleep", "600"], env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "late", key: "token" } } }] }],
      },
    });
    const waiting = await waitFor("waiter in CreateContainerConfigError", () => tryGetJson(env, "pod", "waiter", "-n", NS)?.status?.containerStatuses?.[0]?.state?.waiting, 20_000, () => agent.stdout + agent.stderr);
    expect(waiting).toEqual({ reason: "CreateContainerConfigError", message: 'secret "late" not found' });
    const failed = await waitFor("the Failed event", () => getJson(env, "events", "-n", NS, "--field-selector", "involvedObject.name=waiter").items.find((e: { reason: string }) => e.reason === "Failed"));
    expect(failed.message).toBe('Error: secret "late" not found');
    apply("late", { apiVersion: "v1", kind: "Secret", metadata: { name: "late", namespace: NS }, stringData: { token: "t" } });
    await waitFor("waiter Running", () => tryGetJson(env, "pod", "waiter", "-n", NS)?.status?.phase === "Running" && tryGetJson(env, "pod", "waiter", "-n", NS)?.status?.containerStatuses?.[0]?.state?.running, 20_000);
  });
});
