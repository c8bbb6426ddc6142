/**
 * A container's env as the kubelet's makeEnvironmentVariables makes it, against a fake source of
 * objects: ConfigMap and Secret keys (optional, missing, absent keys, in the kubelet's words),
 * envFrom with its prefix (env overrides it), `$(VAR)` against what is defined and the Services,
 * and the service variables (the master service always, the namespace's with enableServiceLinks).
 */
import { describe, expect, test } from "bun:test";
import { ContainerConfigError, containerEnv } from "../../src/kubelet/env/container-env.ts";
import { serviceEnv } from "../../src/kubelet/env/service-env.ts";
import type { PodSpec } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { FakePodObjects } from "../fake-pod-objects.ts";

function clusterPod(container: Record<string, unknown>, spec: Record<string, unknown> = {}, apiObjects: "allowed" | "refused" = "allowed"): PodSpec {
  return validatePod(
    { apiVersion: "v1", kind: "Pod", metadata: { name: "web", namespace: "demo" }, spec: { containers: [{ name: "app", image: "busybox", command: ["true"], ...container }], ...spec } },
    { file: "pod", source: "api", node: "", apiObjects },
  );
}

const KUBERNETES = { namespace: "default", name: "kubernetes", clusterIP: "10.0.0.1", ports: [{ name: "https", port: 443, protocol: "TCP" }] };

function objects(): FakePodObjects {
  const source = new FakePodObjects();
  source.serviceList = [KUBERNETES];
  source.setConfigMap("demo", "cfg", { mode: "fast", url: "http://x" });
  source.setSecret("demo", "db", { password: "s3cret" });
  return source;
}

function envOf(container: Record<string, unknown>, source = objects(), spec: Record<string, unknown> = {}): Record<string, string> | string {
  const pod = clusterPod(container, spec);
  try {
    return Object.fromEntries(containerEnv(pod, pod.containers[0]!, { createdAt: 0, podIP: "10.1.0.5" }, source).map((e) => [e.name, e.value]));
  } catch (error) {
    if (error instanceof ContainerConfigError) return `error: ${error.message}`;
    throw error;
  }
}

const MASTER = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443", KUBERNETES_SERVICE_PORT_HTTPS: "443", KUBERNETES_PORT: "tcp://10.0.0.1:443", KUBERNETES_PORT_443_TCP: "tcp://10.0.0.1:443", KUBERNETES_PORT_443_TCP_PROTO: "tcp", KUBERNETES_PORT_443_TCP_PORT: "443", KUBERNETES_PORT_443_TCP_ADDR: "10.0.0.1" };
const cm = (name: string, key: string, optional?: boolean) => ({ configMapKeyRef: { name, key, ...(optional !== undefined && { optional }) } });
const sec = (name: string, key: string, optional?: boolean) => ({ secretKeyRef: { name, key, ...(optional !== undefined && { optional }) } });

const table: [string, Record<string, unknown>, Record<string, string> | string][] = [
  ["a ConfigMap's key and a Secret's key", { env: [{ name: "MODE", valueFrom: cm("cfg", "mode") }, { name: "PW", valueFrom: sec("db", "password") }] }, { MODE: "fast", PW: "s3cret", ...MASTER }],
  ["a missing ConfigMap holds the container back", { env: [{ name: "MODE", valueFrom: cm("nope", "mode") }] }, `error: configmap "nope" not found`],
  ["a missing Secret holds the container back", { env: [{ name: "PW", valueFrom: sec("nope", "password") }] }, `error: secret "nope" not found`],
  ["an optional missing ConfigMap leaves the variable out", { env: [{ name: "MODE", valueFrom: cm("nope", "mode", true) }, { name: "A", value: "1" }] }, { A: "1", ...MASTER }],
  ["a missing key", { env: [{ name: "X", valueFrom: cm("cfg", "nokey") }] }, "error: couldn't find key nokey in ConfigMap demo/cfg"],
  ["a missing key of a Secret", { env: [{ name: "X", valueFrom: sec("db", "nokey") }] }, "error: couldn't find key nokey in Secret demo/db"],
  ["an optional missing key leaves the variable out", { env: [{ name: "X", valueFrom: sec("db", "nokey", true) }] }, { ...MASTER }],
  ["envFrom with a prefix; env overrides it", { envFrom: [{ configMapRef: { name: "cfg" }, prefix: "CFG_" }, { secretRef: { name: "db" } }], env: [{ name: "CFG_mode", value: "slow" }] }, { CFG_mode: "slow", CFG_url: "http://x", password: "s3cret", ...MASTER }],
  ["envFrom of a missing object, optional or not", { envFrom: [{ configMapRef: { name: "nope", optional: true } }, { secretRef: { name: "gone" } }] }, `error: secret "gone" not found`],
  ["$(VAR) sees envFrom's variables and the Services", { envFrom: [{ configMapRef: { name: "cfg" } }], env: [{ name: "TARGET", value: "$(url) via $(KUBERNETES_SERVICE_HOST) $(UNDEFINED)" }] }, { mode: "fast", url: "http://x", TARGET: "http://x via 10.0.0.1 $(UNDEFINED)", ...MASTER }],
  ["a variable of the container wins over a service variable of the same name", { env: [{ name: "KUBERNETES_SERVICE_HOST", value: "mine" }] }, { ...MASTER, KUBERNETES_SERVICE_HOST: "mine" }],
];

describe("makeEnvironmentVariables against the objects", () => {
  for (const [name, container, expected] of table) test(name, () => expect(envOf(container)).toEqual(expected));

  test("an object the source has not read yet holds the container back with the cache's message", () => {
    const source = objects();
    source.unread.add("configMap demo/cfg");
    expect(envOf({ env: [{ name: "MODE", valueFrom: cm("cfg", "mode", true) }] }, source)).toBe("error: failed to sync configmap cache: timed out waiting for the condition");
  });

  test("a cluster pod waits for the Services to be read once; a static pod does not", () => {
    const source = objects();
    source.serviceList = undefined;
    expect(envOf({ env: [{ name: "A", value: "1" }] }, source)).toBe("error: services have not yet been read at least once, cannot construct envvars");
    const staticPod = clusterPod({ env: [{ name: "A", value: "1" }] }, {}, "refused");
    expect(containerEnv(staticPod, staticPod.containers[0]!, { createdAt: 0 }, source)).toEqual([{ name: "A", value: "1" }]);
  });

  test("the namespace's Services with enableServiceLinks (the default), the master service always", () => {
    const source = objects();
    source.serviceList = [KUBERNETES, { namespace: "demo", name: "redis-main", clusterIP: "10.0.0.9", ports: [{ port: 6379 }, { name: "metrics", port: 9121, protocol: "TCP" }] }, { namespace: "other", name: "db", clusterIP: "10.0.0.3", ports: [{ port: 5432 }] }, { namespace: "demo", name: "headless", clusterIP: "None", ports: [{ port: 80 }] }];
    const linked = envOf({}, source) as Record<string, string>;
    expect(Object.keys(linked).filter((k) => k.startsWith("REDIS_MAIN")).sort()).toEqual(
      ["REDIS_MAIN_PORT", "REDIS_MAIN_PORT_6379_TCP", "REDIS_MAIN_PORT_6379_TCP_ADDR", "REDIS_MAIN_PORT_6379_TCP_PORT", "REDIS_MAIN_PORT_6379_TCP_PROTO", "REDIS_MAIN_PORT_9121_TCP", "REDIS_MAIN_PORT_9121_TCP_ADDR", "REDIS_MAIN_PORT_9121_TCP_PORT", "REDIS_MAIN_PORT_9121_TCP_PROTO", "REDIS_MAIN_SERVICE_HOST", "REDIS_MAIN_SERVICE_PORT", "REDIS_MAIN_SERVICE_PORT_METRICS"].sort(),
    );
    expect(linked.REDIS_MAIN_PORT).toBe("tcp://10.0.0.9:6379");
    expect(linked.REDIS_MAIN_SERVICE_PORT_METRICS).toBe("9121");
    expect(Object.keys(linked).some((k) => k.startsWith("DB_") || k.startsWith("HEADLESS"))).toBe(false);
    expect(envOf({}, source, { enableServiceLinks: false })).toEqual(MASTER);
  });

  test("an IPv6 cluster IP is bracketed in the link variables", () => {
    expect(serviceEnv([{ namespace: "default", name: "kubernetes", clusterIP: "fd00::1", ports: [{ port: 443 }] }], "x", true).get("KUBERNETES_PORT")).toBe("tcp://[fd00::1]:443");
  });
});

describe("static pods may not reference API objects", () => {
  test("a file's configMapKeyRef, envFrom and configMap volume are refused; a cluster pod's are read", () => {
    const refs = { env: [{ name: "MODE", valueFrom: cm("cfg", "mode") }], envFrom: [{ secretRef: { name: "db" } }] };
    expect(() => clusterPod(refs, { volumes: [{ name: "c", configMap: { name: "cfg" } }] }, "refused")).toThrow("static pods cannot reference ConfigMaps or Secrets");
    const pod = clusterPod(refs, { volumes: [{ name: "c", configMap: { name: "cfg", items: [{ key: "mode", path: "m", mode: 0o400 }] } }] });
    expect(pod.fromCluster).toBe(true);
    // A projected volume of the downward API alone is a static pod's to have, as the kubelet allows.
    const projected = clusterPod({}, { volumes: [{ name: "p", projected: { sources: [{ downwardAPI: { items: [{ path: "ns", fieldRef: { fieldPath: "metadata.namespace" } }] } }] } }] }, "refused");
    expect(projected.volumes[0]).toMatchObject({ type: "projected", sources: [{ kind: "downwardAPI" }] });
    expect(pod.containers[0]!.envFrom).toEqual([{ prefix: "", kind: "secret", name: "db", optional: false }]);
    expect(pod.volumes).toEqual([{ name: "c", type: "configMap", defaultMode: 0o644, source: { name: "cfg", optional: false, items: [{ key: "mode", path: "m", mode: 0o400 }] } }]);
  });
});
