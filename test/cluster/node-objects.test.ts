/**
 * What a node's pods reference, read from the real API server (v1.37.2) with the node's own
 * credentials, as the loop's PodObjectSource (src/node/pod-object-cache.ts): the ConfigMap and the
 * Secret a pod bound to node objs-1 references are read (a ConfigMap no pod of the node references
 * is forbidden by the Node authorizer), an edit reaches the cache through its watch, and a
 * TokenRequest gives a token bound to the pod that the API server accepts as the pod's
 * ServiceAccount. The ServiceAccount admission's `kube-api-access-*` volume of that pod is then
 * written as the kubelet writes it: token, ca.crt (kube-root-ca.crt's), namespace.
 *
 * The loop is not run here: cluster pods reach it with the pods part of node mode. The pod is
 * created by the admin, bound to the node, and never runs.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeCluster, getJson, kubectl, nodeCredentials, type ClusterEnv, applyObject } from "../cluster-fixtures.ts";
import { ClusterClient, ClusterApiError } from "../../src/node/cluster-client.ts";
import { readKubeconfig } from "../../src/node/kubeconfig.ts";
import { PodObjectCache } from "../../src/node/pod-object-cache.ts";
import { admitApiPod } from "../../src/manifest/api-pod.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { isFilledVolume } from "../../src/manifest/types.ts";
import { realClock } from "../../src/clock.ts";
import type { ObjectChange } from "../../src/kubelet/objects/pod-object-source.ts";
import { TokenCache } from "../../src/kubelet/volumes/token-cache.ts";
import { volumePayload } from "../../src/kubelet/volumes/object-payload.ts";
import { writeAtomically } from "../../src/kubelet/volumes/atomic-writer.ts";

const NODE = "objs-1";
const NS = "default";
const POD = "objs-1-reader";
const CONFIG = "objs-1-config";
const SECRET = "objs-1-secret";
const OTHER = "objs-1-unreferenced";


function cleanUp(env: ClusterEnv): void {
  kubectl(env, "delete", "pod", POD, "-n", NS, "--ignore-not-found", "--grace-period=0", "--force", "--wait=false");
  kubectl(env, "delete", "configmap", CONFIG, OTHER, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "secret", SECRET, "-n", NS, "--ignore-not-found");
  kubectl(env, "delete", "node", NODE, "--ignore-not-found");
}

async function until<T>(what: string, check: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

describeCluster("node mode: the objects a node's pods reference", (env) => {
  let cache: PodObjectCache;
  let client: ClusterClient;
  let pod: PodSpec;
  const changes: ObjectChange[] = [];
  const logs: string[] = [];

  beforeAll(async () => {
    cleanUp(env);
    // The Node exists, so the pod GC does not take the pod bound to it for an orphan.
    applyObject(env, { apiVersion: "v1", kind: "Node", metadata: { name: NODE } });
    applyObject(env, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: CONFIG, namespace: NS }, data: { greeting: "hello", "app.conf": "level=1\n" } });
    applyObject(env, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: OTHER, namespace: NS }, data: { x: "y" } });
    applyObject(env, { apiVersion: "v1", kind: "Secret", metadata: { name: SECRET, namespace: NS }, stringData: { password: "s3cret" } });
    applyObject(env, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: POD, namespace: NS },
      spec: {
        nodeName: NODE,
        containers: [
          {
            name: "app",
            image: "busybox",
            env: [{ name: "PASSWORD", valueFrom: { secretKeyRef: { name: SECRET, key: "password" } } }],
            volumeMounts: [{ name: "config", mountPath: "/etc/app" }],
          },
        ],
        volumes: [{ name: "config", configMap: { name: CONFIG, items: [{ key: "app.conf", path: "app.conf", mode: 0o600 }] } }],
      },
    });
    const served = getJson(env, "pod", POD, "-n", NS);
    // The pod as the API server stored it (the ServiceAccount admission added kube-api-access-*), admitted as a cluster pod.
    pod = admitApiPod(served, { uid: served.metadata.uid, node: NODE, label: `pod "${POD}"`, meta: { createdAt: Date.parse(served.metadata.creationTimestamp) }, stage: "stored", apiObjects: "allowed" }).pod;
    client = new ClusterClient(readKubeconfig(nodeCredentials(env, NODE).kubeconfig));
    cache = new PodObjectCache({ client, clock: realClock, log: (line) => logs.push(line) });
    cache.onChange((change) => changes.push(change));
    cache.start();
    cache.registerPod(pod);
  });

  afterAll(() => {
    cache?.stop();
    cleanUp(env);
  });

  test("the node's credentials read the ConfigMap and the Secret its pod references, through the cache", async () => {
    const config = await until("the ConfigMap", () => {
      const lookup = cache.configMap(NS, CONFIG);
      return lookup.state === "found" ? lookup.object : undefined;
    });
    expect(config.data).toEqual({ greeting: "hello", "app.conf": "level=1\n" });
    const secret = await until("the Secret", () => {
      const lookup = cache.secret(NS, SECRET);
      return lookup.state === "found" ? lookup.object : undefined;
    });
    expect(new TextDecoder().decode(secret.data.password)).toBe("s3cret");
    // kube-root-ca.crt, which the admission's projected volume references, is the node's to read too.
    await until("kube-root-ca.crt", () => (cache.configMap(NS, "kube-root-ca.crt").state === "found" ? true : undefined));
    expect(changes.some((change) => change.kind === "configMap" && change.name === CONFIG)).toBe(true);
    const services = await until("the Services", () => cache.services());
    expect(services.find((service) => service.namespace === "default" && service.name === "kubernetes")?.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  test("a ConfigMap no pod of the node references is forbidden to it; the cache says so, once", async () => {
    const direct = await client.request({ method: "GET", path: `/api/v1/namespaces/${NS}/configmaps/${OTHER}` }).catch((error: unknown) => error);
    expect(direct).toBeInstanceOf(ClusterApiError);
    expect((direct as ClusterApiError).forbidden).toBe(true);
    expect((direct as ClusterApiError).message).toContain(`no relationship found between node '${NODE}' and this object`);
    const stranger = { ...pod, uid: "not-bound-to-the-node", volumes: [{ name: "x", type: "configMap" as const, defaultMode: 0o644, source: { name: OTHER, optional: false } }], containers: [] };
    cache.registerPod(stranger);
    const lookup = await until("the refusal", () => {
      const answer = cache.configMap(NS, OTHER);
      return answer.state === "unavailable" && answer.message.includes("forbidden") ? answer : undefined;
    });
    expect(lookup.message).toContain(`cannot list resource "configmaps"`);
    expect(logs.filter((line) => line.includes(`configmaps ${NS}/${OTHER}`))).toHaveLength(1);
    expect(logs[0]).toStartWith(`node objects: forbidden to list configmaps ${NS}/${OTHER}:`);
    cache.unregisterPod(stranger.uid);
  });

  test("an edit of the ConfigMap reaches the cache through its watch", async () => {
    await until("the ConfigMap", () => (cache.configMap(NS, CONFIG).state === "found" ? true : undefined));
    const before = changes.length;
    const watchesBefore = client.requestCounts.get("WATCH configmaps") ?? 0;
    kubectl(env, "patch", "configmap", CONFIG, "-n", NS, "--type=merge", "-p", JSON.stringify({ data: { greeting: "bonjour" } }));
    await until("the edit", () => {
      const lookup = cache.configMap(NS, CONFIG);
      return lookup.state === "found" && lookup.object.data.greeting === "bonjour" ? true : undefined;
    });
    expect(changes.slice(before)).toContainEqual({ kind: "configMap", namespace: NS, name: CONFIG });
    // Seen on the watch already open: no new listing, no new watch.
    expect(client.requestCounts.get("WATCH configmaps") ?? 0).toBe(watchesBefore);
  });

  test("a TokenRequest gives a token bound to the pod, which the API server takes for the pod's ServiceAccount", async () => {
    const issued = await cache.serviceAccountToken({ namespace: NS, serviceAccount: "default", podName: POD, podUid: pod.uid, audiences: [], expirationSeconds: 3600 });
    expect(issued.expiresAt).toBeGreaterThan(Date.now() + 3000 * 1000);
    const dir = mkdtempSync(join(tmpdir(), "objs-"));
    try {
      writeFileSync(join(dir, "review.json"), JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token: issued.token } }));
      const review = JSON.parse(kubectl(env, "create", "-f", join(dir, "review.json"), "-o", "json"));
      expect(review.status.authenticated).toBe(true);
      expect(review.status.user.username).toBe(`system:serviceaccount:${NS}:default`);
      expect(review.status.user.extra["authentication.kubernetes.io/pod-name"]).toEqual([POD]);
      expect(review.status.user.extra["authentication.kubernetes.io/pod-uid"]).toEqual([pod.uid]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the ServiceAccount admission's kube-api-access volume is written with a token, the cluster's CA and the namespace", async () => {
    const volume = pod.volumes.find((v) => v.name.startsWith("kube-api-access-"));
    if (!volume || !isFilledVolume(volume)) throw new Error(`no kube-api-access volume in ${JSON.stringify(pod.volumes)}`);
    const woken: string[] = [];
    const tokens = new TokenCache({ source: cache, clock: realClock, issued: (uid) => woken.push(uid) });
    const inputs = { facts: { createdAt: pod.api!.createdAt }, objects: cache, tokens };
    // The first pass asks for the token and cannot set the volume up yet: the token's arrival wakes the pod.
    expect(() => volumePayload(pod, volume, inputs)).toThrow("waiting for a token of service account default/default");
    await until("the token", () => (woken.includes(pod.uid) ? true : undefined));
    const payload = volumePayload(pod, volume, inputs);
    const dir = mkdtempSync(join(tmpdir(), "objs-"));
    try {
      writeAtomically(dir, payload.files, Date.now());
      const ca = getJson(env, "configmap", "kube-root-ca.crt", "-n", NS).data["ca.crt"];
      expect(readFileSync(join(dir, "ca.crt"), "utf8")).toBe(ca);
      expect(readFileSync(join(dir, "namespace"), "utf8")).toBe(NS);
      expect(readFileSync(join(dir, "token"), "utf8").split(".")).toHaveLength(3);
      // Refreshed after 80% of the 3607 s the admission asks for.
      expect(payload.nextAt! - Date.now()).toBeGreaterThan(2800 * 1000);
      expect(payload.nextAt! - Date.now()).toBeLessThan(2900 * 1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
