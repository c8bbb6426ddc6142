/**
 * Issue 22: one owner for the served Pod. What a write answers is what a GET serves next, whether
 * or not the loop has synced the pod since; a served pod carries the API server's defaults, stored
 * once (so an update compares stored values, not values derived again); and a deleted pod's
 * history says how it ended.
 */
import { describe, expect, test } from "bun:test";
import { apiRoutes } from "../../src/api/routes.ts";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { loadManifest } from "../../src/manifest/source.ts";
import { call } from "../api-objects-fixtures.ts";
import { apiHarness } from "../api-watch-fixtures.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** The API over a fake-runtime agent whose pod writes go to its store, wired as `run` wires them; `sync` is one pass of the loop. */
function agentApi(dir: string) {
  const h = apiHarness(dir);
  const sourceOptions = { db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" as const }, runtimeName: "fake", log: () => {} };
  const sources = new PodSources(sourceOptions);
  const api = { ...h.api, podWrites: sources.writes };
  const send = (method: string, path: string, body?: unknown) => call(apiRoutes, method, path, api, { body: body === undefined ? undefined : JSON.stringify(body) });
  const get = (name: string) => call(apiRoutes, "GET", `/api/v1/namespaces/default/pods/${name}`, api);
  const sync = async () => {
    await h.kubelet.sync(sources.desired(new Map()));
    await h.advance(0);
  };
  return { h, api, sources, send, get, sync };
}

/** A pod as served, without what may move on between two reads: its resourceVersion and its status. */
function identityAndSpec(pod: Record<string, any>) {
  const { resourceVersion: _rv, ...metadata } = pod.metadata;
  return { apiVersion: pod.apiVersion, kind: pod.kind, metadata, spec: pod.spec };
}

// The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
const SLEEPER = { apiVersion: "v1", kind: "Pod", metadata: { name: "web", labels: { app: "web" } }, spec: { automountServiceAccountToken: false, containers: [{ name: "web", image: "busybox", command: ["sleep", "3600"] }] } };

describe("a write's answer is what a GET serves next", () => {
  test("POST then GET, before and after the loop syncs the pod: the same object, bar resourceVersion and status", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    const created = await a.send("POST", "/api/v1/namespaces/default/pods", SLEEPER);
    expect(created.status).toBe(201);
    const pending = await a.get("web");
    expect(pending.status).toBe(200);
    expect(pending.body).toEqual(created.body);
    await a.sync();
    const synced = await a.get("web");
    expect(synced.body.status.phase).toBe("Running");
    expect(identityAndSpec(synced.body)).toEqual(identityAndSpec(created.body));
    a.h.close();
  });

  test("an update is served at once: no GET after it shows the old spec with the new resourceVersion", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    await a.send("POST", "/api/v1/namespaces/default/pods", SLEEPER);
    await a.sync();
    const patch = { spec: { containers: [{ name: "web", image: "busybox:1.36" }] } };
    const response = await patchStrategic(a.api, "web", patch);
    expect(response.status).toBe(200);
    const right = await a.get("web");
    expect(right.body.metadata.resourceVersion).toBe(response.body.metadata.resourceVersion);
    expect(right.body.spec.containers[0].image).toBe("busybox:1.36");
    expect(identityAndSpec(right.body)).toEqual(identityAndSpec(response.body));
    a.h.close();
  });

  test("kubectl run then kubectl set image: the stored imagePullPolicy (Always for busybox) is kept, not derived again from the new tag", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    const created = await a.send("POST", "/api/v1/namespaces/default/pods", SLEEPER);
    expect(created.body.spec.containers[0].imagePullPolicy).toBe("Always");
    await a.sync();
    const response = await patchStrategic(a.api, "web", { spec: { containers: [{ name: "web", image: "busybox:1.36" }] } });
    expect(response.body.message ?? "").toBe("");
    expect(response.status).toBe(200);
    expect(response.body.spec.containers[0]).toMatchObject({ image: "busybox:1.36", imagePullPolicy: "Always" });
    a.h.close();
  });

  test("DELETE then GET: the Terminating pod the answer reported, bar resourceVersion and status", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    // Still stopping after the loop's next pass: only the grace's SIGKILL ends it.
    a.h.runtime.behaviours.set("web", { ignoreSigterm: true });
    await a.send("POST", "/api/v1/namespaces/default/pods", { ...SLEEPER, spec: { ...SLEEPER.spec, terminationGracePeriodSeconds: 5 } });
    await a.sync();
    const deleted = await a.send("DELETE", "/api/v1/namespaces/default/pods/web", { gracePeriodSeconds: 3 });
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.deletionGracePeriodSeconds).toBe(3);
    const right = await a.get("web");
    expect(right.body).toEqual(deleted.body);
    await a.sync();
    const stopping = await a.get("web");
    expect(identityAndSpec(stopping.body)).toEqual(identityAndSpec(deleted.body));
    a.h.close();
  });
});

async function patchStrategic(api: Parameters<typeof call>[3], name: string, patch: unknown) {
  const route = apiRoutes.find((r) => r.method === "PATCH" && r.path === "/api/v1/namespaces/:namespace/pods/:name")!;
  const url = new URL(`https://127.0.0.1:6443/api/v1/namespaces/default/pods/${name}`);
  const body = new TextEncoder().encode(JSON.stringify(patch));
  try {
    const response = await route.handle(
      {
        method: "PATCH",
        url,
        headers: new Headers({ "content-type": "application/strategic-merge-patch+json" }),
        params: { namespace: "default", name },
        query: url.searchParams,
        signal: new AbortController().signal,
        body: async () => body,
        upgrade: () => undefined,
      },
      api,
    );
    return { status: response.status, body: (await response.json()) as any };
  } catch (error) {
    const status = error as { code?: number; toStatus?: () => unknown };
    if (typeof status.toStatus !== "function") throw error;
    return { status: status.code!, body: status.toStatus() as any };
  }
}

const FULL_POD = `apiVersion: v1
kind: Pod
metadata: {name: full, namespace: default}
spec:
  volumes:
    - {name: cache, emptyDir: {}}
    - {name: host, hostPath: {path: /srv}}
    - {name: scratch}
  initContainers:
    - name: setup
      image: busybox:1.36
      command: ["true"]
    - name: proxy
      image: busybox
      restartPolicy: Always
      command: [sleep, "3600"]
      startupProbe: {tcpSocket: {port: 8081}}
  containers:
    - name: web
      image: busybox:1.36
      command: [httpd]
      ports:
        - {name: http, containerPort: 8080}
        - {containerPort: 53, protocol: UDP}
      resources: {limits: {cpu: "0.5", memory: 1024Mi}}
      volumeMounts: [{name: cache, mountPath: /cache}]
      livenessProbe: {httpGet: {port: http}}
      readinessProbe: {exec: {command: ["true"]}, periodSeconds: 5}
      lifecycle: {preStop: {httpGet: {port: 8080, path: /quit}}}
`;

test("a file's pod is served with exactly the API server's defaults (SetObjectDefaults_Pod), field by field", async () => {
  using dir = tempDir();
  const a = agentApi(dir.path);
  const file = join(dir.path, "full.yaml");
  writeFileSync(file, FULL_POD);
  const spec = loadManifest(file, "lab");
  await a.h.kubelet.sync(desired(spec));
  await a.h.advance(0);
  const served = (await a.get("full-lab")).body.spec;
  // SetDefaults_PodSpec and SetDefaults_Pod.
  expect(served.restartPolicy).toBe("Always");
  expect(served.terminationGracePeriodSeconds).toBe(30);
  expect(served.dnsPolicy).toBe("ClusterFirst");
  expect(served.securityContext).toEqual({});
  expect(served.schedulerName).toBe("default-scheduler");
  expect(served.enableServiceLinks).toBe(true);
  expect(served.nodeName).toBe("lab");
  // SetDefaults_Volume (no source: emptyDir) and SetDefaults_HostPathVolumeSource (type "").
  expect(served.volumes).toEqual([
    { name: "cache", emptyDir: {} },
    { name: "host", hostPath: { path: "/srv", type: "" } },
    { name: "scratch", emptyDir: {} },
  ]);
  const [setup, proxy] = served.initContainers;
  const [web] = served.containers;
  // SetDefaults_Container on each kind; resources is a struct, served as {} when empty.
  for (const container of [setup, proxy, web]) {
    expect(container.terminationMessagePath).toBe("/dev/termination-log");
    expect(container.terminationMessagePolicy).toBe("File");
  }
  expect([setup.imagePullPolicy, proxy.imagePullPolicy, web.imagePullPolicy]).toEqual(["IfNotPresent", "Always", "IfNotPresent"]);
  expect(setup.resources).toEqual({});
  expect(proxy.resources).toEqual({});
  // SetDefaults_ResourceList (the stored form of quantities) and SetDefaults_Pod (requests from limits).
  expect(web.resources).toEqual({ limits: { cpu: "500m", memory: "1Gi" }, requests: { cpu: "500m", memory: "1Gi" } });
  // The generated defaulter: ports' protocol.
  expect(web.ports).toEqual([
    { name: "http", containerPort: 8080, protocol: "TCP" },
    { containerPort: 53, protocol: "UDP" },
  ]);
  // SetDefaults_Probe and SetDefaults_HTTPGetAction, on probes and on the preStop hook.
  const timings = { timeoutSeconds: 1, periodSeconds: 10, successThreshold: 1, failureThreshold: 3 };
  expect(proxy.startupProbe).toEqual({ tcpSocket: { port: 8081 }, ...timings });
  expect(web.livenessProbe).toEqual({ httpGet: { port: "http", path: "/", scheme: "HTTP" }, ...timings });
  expect(web.readinessProbe).toEqual({ exec: { command: ["true"] }, ...timings, periodSeconds: 5 });
  expect(web.lifecycle).toEqual({ preStop: { httpGet: { port: 8080, path: "/quit", scheme: "HTTP" } } });
  // Nothing else: what was written, plus the defaults above.
  expect(Object.keys(served).sort()).toEqual(
    ["containers", "dnsPolicy", "enableServiceLinks", "initContainers", "nodeName", "restartPolicy", "schedulerName", "securityContext", "terminationGracePeriodSeconds", "volumes"].sort(),
  );
  expect(Object.keys(web).sort()).toEqual(
    ["command", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "name", "ports", "readinessProbe", "resources", "terminationMessagePath", "terminationMessagePolicy", "volumeMounts"].sort(),
  );
  a.h.close();
});

test("describe of a deleted pod says how it ended, never Running above its Deleted line", async () => {
  using dir = tempDir();
  const a = agentApi(dir.path);
  const file = join(dir.path, "web.yaml");
  writeFileSync(file, "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  terminationGracePeriodSeconds: 2\n  containers: [{name: web, image: busybox, command: [sleep, '60']}]\n");
  await a.h.kubelet.sync(desired(loadManifest(file, "lab")));
  await a.h.advance(5);
  await a.h.kubelet.sync(desired());
  await a.h.advance(5);
  let out = "";
  await describeCommand("pod", "web-lab", { db: a.h.dbPath }, { clock: a.h.clock, stdout: (text) => (out += text), utcOffsetMinutes: 0 });
  expect(out).toMatch(/\nDeleted: /);
  expect(out).not.toMatch(/\nStatus: +Running\n/);
  // Stopped with SIGTERM (143): a terminal pod with a failed container is Failed (getPhase).
  expect(out).toMatch(/\nStatus: +Failed\n/);
  a.h.close();
});
