/**
 * A cluster pod's references consumed by the loop on the real process runtime, against the real
 * API server (v1.37.2), with node objs-2's credentials: the pod (created by the admin, bound to
 * objs-2) is handed to the loop directly, as the pods part of node mode will hand it over. Its
 * container gets a Secret's key as env, reads its ConfigMap volume, lists the pods of its namespace
 * with the token of its projected ServiceAccount volume, and sees a ConfigMap edit reach the file
 * while it runs.
 *
 * The process runtime hands volumes over in MINIKUBELET_VOLUME_<NAME> when their mountPath does not
 * exist on the host (here: the ServiceAccount's). The API server is reached at its own address: the
 * `kubernetes` Service's cluster IP has no proxy on this host.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv, applyObject } from "../cluster-fixtures.ts";
import { ClusterClient } from "../../src/node/cluster-client.ts";
import { readKubeconfig } from "../../src/node/kubeconfig.ts";
import { PodObjectCache } from "../../src/node/pod-object-cache.ts";
import { admitApiPod } from "../../src/manifest/api-pod.ts";
import { realClock } from "../../src/clock.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

const NODE = "objs-2";
const NS = "default";
const POD = "objs-2-app";
const SA = "objs-2-lister";


function cleanUp(env: ClusterEnv): void {
  kubectl(env, "delete", "pod", POD, "-n", NS, "--ignore-not-found", "--grace-period=0", "--force", "--wait=false");
  kubectl(env, "delete", "configmap", `${NODE}-config`, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "secret", `${NODE}-secret`, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "rolebinding,role", SA, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "serviceaccount", SA, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "node", NODE, "--ignore-not-found");
}

const SCRIPT = `
echo "password=$PASSWORD"
CFG="$MINIKUBELET_VOLUME_CONFIG/greeting"
echo "greeting=$(cat "$CFG")"
SA_DIR="$MINIKUBELET_VOLUME_SA"
curl -sS --cacert "$SA_DIR/ca.crt" -H "Authorization: Bearer $(cat "$SA_DIR/token")" "$API_SERVER/api/v1/namespaces/$(cat "$SA_DIR/namespace")/pods" | grep -o '"name": *"${POD}"' | head -n 1
echo listed
while [ "$(cat "$CFG")" = hello ]; do sleep 0.1; done
echo "greeting=$(cat "$CFG")"
`;

describeCluster("node mode: a cluster pod's ConfigMap, Secret and token on the process runtime", (env) => {
  const cgroups = testCgroupIdentities();
  let root: string;
  let runtime: ProcessRuntime;
  let cache: PodObjectCache;
  let h: ReturnType<typeof realHarness>;

  beforeAll(() => {
    cleanUp(env);
    applyObject(env, { apiVersion: "v1", kind: "Node", metadata: { name: NODE } });
    applyObject(env, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: SA, namespace: NS } });
    kubectl(env, "create", "role", SA, "-n", NS, "--verb=list", "--resource=pods");
    kubectl(env, "create", "rolebinding", SA, "-n", NS, "--role", SA, `--serviceaccount=${NS}:${SA}`);
    applyObject(env, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: `${NODE}-config`, namespace: NS }, data: { greeting: "hello" } });
    applyObject(env, { apiVersion: "v1", kind: "Secret", metadata: { name: `${NODE}-secret`, namespace: NS }, stringData: { password: "s3cret" } });
    root = mkdtempSync(join(tmpdir(), "mk-objs-"));
    runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
    cache = new PodObjectCache({ client: new ClusterClient(readKubeconfig(nodeCredentials(env, NODE).kubeconfig)), clock: realClock, log: () => {} });
    cache.start();
    h = realHarness(runtime, { objects: cache });
  });

  afterAll(async () => {
    await h?.close();
    cache?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
    cgroups.cleanup();
    cleanUp(env);
  });

  test("env from the Secret, the ConfigMap's file (edited while it runs), and pods listed with the pod's token", async () => {
    applyObject(env, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: POD, namespace: NS },
      spec: {
        nodeName: NODE,
        serviceAccountName: SA,
        restartPolicy: "Never",
        containers: [
          {
            name: "app",
            image: "busybox",
            command: ["sh", "-c", SCRIPT],
            env: [
              { name: "PASSWORD", valueFrom: { secretKeyRef: { name: `${NODE}-secret`, key: "password" } } },
              { name: "API_SERVER", value: env.server },
            ],
            volumeMounts: [
              { name: "config", mountPath: "/etc/objs-2-config" },
              // Mounted where the admission would put kube-api-access-*: it adds none then.
              { name: "sa", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
            ],
          },
        ],
        volumes: [
          { name: "config", configMap: { name: `${NODE}-config` } },
          {
            name: "sa",
            projected: {
              sources: [
                { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
                { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                { downwardAPI: { items: [{ path: "namespace", fieldRef: { fieldPath: "metadata.namespace" } }] } },
              ],
            },
          },
        ],
      },
    });
    const served = getJson(env, "pod", POD, "-n", NS);
    const pod = admitApiPod(served, { uid: served.metadata.uid, node: NODE, label: `pod "${POD}"`, meta: { createdAt: Date.parse(served.metadata.creationTimestamp) }, stage: "stored", apiObjects: "allowed" }).pod;
    // No fixed wait: the loop starts the container once the cache has listed what it references.
    await h.kubelet.sync(desired(pod));
    await h.event((e) => e.reason === "Started" && e.container === "app", 20_000);
    const id = () => h.kubelet.pods.get(pod.key)!.app[0]!.containerId!;
    const deadline = Date.now() + 15_000;
    while (!(await runtime.readLogs(id())).includes("listed")) {
      if (Date.now() > deadline) throw new Error(`no "listed" in: ${await runtime.readLogs(id())}`);
      await Bun.sleep(50);
    }
    kubectl(env, "patch", "configmap", `${NODE}-config`, "-n", NS, "--type=merge", "-p", JSON.stringify({ data: { greeting: "bonjour" } }));
    const exited = await h.event((e) => e.reason === "Exited" && e.container === "app", 20_000);
    expect(exited.message).toBe("Container app exited with code 0 (Completed)");
    const lines = (await runtime.readLogs(id())).trim().split("\n");
    expect(lines).toEqual(["password=s3cret", "greeting=hello", `"name": "${POD}"`, "listed", "greeting=bonjour"]);
  });
});
