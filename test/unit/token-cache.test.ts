/**
 * ServiceAccount tokens of projected volumes (fake clock, a fake source answering TokenRequests
 * when the test says): requested bound to the pod, refreshed at 80% of the requested lifetime or
 * after 24 hours, the old token used until it expires, a failed request retried with a capped
 * doubling; in the loop, the pod waits for its first token (FailedMount) and the file is rewritten
 * when a refreshed one arrives.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TokenCache } from "../../src/kubelet/volumes/token-cache.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakePodObjects } from "../fake-pod-objects.ts";
import { harness } from "../kubelet-harness.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";

const HOUR = 3600_000;
const request = { namespace: "demo", serviceAccount: "builder", podName: "web", podUid: "u-1", audiences: [], expirationSeconds: 3600 };
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the token cache", () => {
  test("asks once, answers at once, refreshes at 80% of the lifetime and hands out the old token meanwhile", async () => {
    const clock = new FakeClock();
    const source = new FakePodObjects();
    const woken: string[] = [];
    const tokens = new TokenCache({ source, clock, issued: (uid) => woken.push(uid) });
    expect(tokens.token(request).lookup).toEqual({ state: "unavailable", message: "waiting for a token of service account demo/builder" });
    tokens.token(request);
    expect(source.tokenRequests.map((r) => r.request)).toEqual([request]);
    source.tokenRequests[0]!.resolve({ token: "t1", expiresAt: clock.now() + HOUR });
    await settle();
    expect(woken).toEqual(["u-1"]);
    expect(tokens.token(request)).toEqual({ lookup: { state: "found", object: "t1" }, nextAt: clock.now() + 0.8 * HOUR });

    clock.step(0.8 * HOUR - 1);
    expect(tokens.token(request).lookup).toEqual({ state: "found", object: "t1" });
    expect(source.tokenRequests).toHaveLength(1);
    clock.step(1);
    expect(tokens.token(request).lookup).toEqual({ state: "found", object: "t1" });
    expect(source.tokenRequests).toHaveLength(2);
    source.tokenRequests[1]!.resolve({ token: "t2", expiresAt: clock.now() + HOUR });
    await settle();
    expect(tokens.token(request).lookup).toEqual({ state: "found", object: "t2" });
  });

  test("a long-lived token is refreshed after 24 hours", async () => {
    const clock = new FakeClock();
    const source = new FakePodObjects();
    const tokens = new TokenCache({ source, clock, issued: () => {} });
    const long = { ...request, expirationSeconds: 48 * 3600 };
    tokens.token(long);
    source.tokenRequests[0]!.resolve({ token: "t1", expiresAt: clock.now() + 48 * HOUR });
    await settle();
    expect(tokens.token(long).nextAt).toBe(clock.now() + 24 * HOUR);
  });

  test("a failed request is retried after 1 s, then 2 s; an expired token is no longer handed out", async () => {
    const clock = new FakeClock();
    const source = new FakePodObjects();
    const logs: string[] = [];
    const tokens = new TokenCache({ source, clock, issued: () => {}, log: (line) => logs.push(line) });
    tokens.token(request);
    source.tokenRequests[0]!.reject(new Error("serviceaccounts \"builder\" not found"));
    await settle();
    expect(tokens.token(request)).toEqual({ lookup: { state: "unavailable", message: 'failed to fetch token: serviceaccounts "builder" not found' }, nextAt: clock.now() + 1000 });
    clock.step(1000);
    tokens.token(request);
    source.tokenRequests[1]!.reject(new Error("serviceaccounts \"builder\" not found"));
    await settle();
    expect(tokens.token(request).nextAt).toBe(clock.now() + 2000);
    expect(logs).toHaveLength(1);
    clock.step(2000);
    tokens.token(request);
    source.tokenRequests[2]!.resolve({ token: "t1", expiresAt: clock.now() + HOUR });
    await settle();
    clock.step(HOUR);
    tokens.token(request);
    source.tokenRequests[3]!.reject(new Error("down"));
    await settle();
    expect(tokens.token(request).lookup.state).toBe("unavailable");
  });
});

function tokenPod() {
  return validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: {
        serviceAccountName: "builder",
        containers: [{ name: "app", image: "busybox", command: ["sleep", "60"], volumeMounts: [{ name: "kube-api-access-x1", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }] }],
        volumes: [
          {
            name: "kube-api-access-x1",
            projected: {
              defaultMode: 0o644,
              sources: [
                { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
                { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
                { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
              ],
            },
          },
        ],
      },
    },
    { file: "pod", source: "api", node: "", apiObjects: "allowed" },
  );
}

test("in the loop: the pod waits for its first token, then the token file is rewritten when the refreshed one arrives", async () => {
  using dir = tempDir();
  const objects = new FakePodObjects();
  objects.setConfigMap("demo", "kube-root-ca.crt", { "ca.crt": "CA" });
  const h = harness({ objects });
  h.runtime.volumeRoot = dir.path;
  const web = tokenPod();
  await h.kubelet.sync(desired(web));
  expect(h.runtime.containers.size).toBe(0);
  expect(h.events.map((e) => e.message)).toContain('MountVolume.SetUp failed for volume "kube-api-access-x1" : waiting for a token of service account demo/builder');
  expect(objects.tokenRequests.map((r) => r.request)).toEqual([{ namespace: "demo", serviceAccount: "builder", podName: "web", podUid: web.uid, audiences: [], expirationSeconds: 3607 }]);

  objects.tokenRequests[0]!.resolve({ token: "t1", expiresAt: h.clock.now() + 3607_000 });
  await settle();
  await h.kubelet.idle();
  expect(h.runtime.containers.size).toBe(1);
  const root = join(dir.path, web.uid, "kube-api-access-x1");
  expect(["token", "ca.crt", "namespace"].map((name) => readFileSync(join(root, name), "utf8"))).toEqual(["t1", "CA", "demo"]);

  // 80% of 3607 s later the loop wakes on its own and asks again; the file keeps t1 until t2 comes.
  await h.advance(0.8 * 3607);
  expect(objects.tokenRequests).toHaveLength(2);
  expect(readFileSync(join(root, "token"), "utf8")).toBe("t1");
  objects.tokenRequests[1]!.resolve({ token: "t2", expiresAt: h.clock.now() + 3607_000 });
  await settle();
  await h.kubelet.idle();
  expect(readFileSync(join(root, "token"), "utf8")).toBe("t2");
});

test("in the loop: a failed TokenRequest is asked again on its own after the retry wait, and the pod starts", async () => {
  using dir = tempDir();
  const objects = new FakePodObjects();
  objects.setConfigMap("demo", "kube-root-ca.crt", { "ca.crt": "CA" });
  const h = harness({ objects });
  h.runtime.volumeRoot = dir.path;
  await h.kubelet.sync(desired(tokenPod()));
  objects.tokenRequests[0]!.reject(new Error("the server is currently unable to handle the request"));
  await settle();
  await h.kubelet.idle();
  expect(h.events.map((e) => e.message)).toContain('MountVolume.SetUp failed for volume "kube-api-access-x1" : failed to fetch token: the server is currently unable to handle the request');
  expect(objects.tokenRequests).toHaveLength(1);
  await h.advance(1);
  expect(objects.tokenRequests).toHaveLength(2);
  objects.tokenRequests[1]!.resolve({ token: "t1", expiresAt: h.clock.now() + 3607_000 });
  await settle();
  await h.kubelet.idle();
  expect(h.runtime.containers.size).toBe(1);
});
