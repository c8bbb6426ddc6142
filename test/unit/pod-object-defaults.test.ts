/**
 * The v1 Pod we serve carries the API server's defaults, as a real API server stores them: a probe
 * written without its timings reads `timeout=1s period=10s #success=1 #failure=3` in
 * `kubectl describe pod`, not zeros.
 */
import { expect, test } from "bun:test";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { newPodRecord } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

test("probes, pull policy and termination message fields get the API server's defaults", () => {
  const spec = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: {
        containers: [
          {
            name: "web",
            image: "busybox:1",
            command: ["httpd"],
            livenessProbe: { httpGet: { path: "/healthz", port: 8080 } },
            readinessProbe: { exec: { command: ["true"] }, periodSeconds: 5 },
          },
        ],
      },
    },
    { file: "web.yaml", source: "/m/web.yaml", node: "lab" },
  );
  const [web] = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.containers as Record<string, any>[];
  expect(web!.livenessProbe).toEqual({
    httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" },
    timeoutSeconds: 1,
    periodSeconds: 10,
    successThreshold: 1,
    failureThreshold: 3,
  });
  expect(web!.readinessProbe).toEqual({ exec: { command: ["true"] }, timeoutSeconds: 1, periodSeconds: 5, successThreshold: 1, failureThreshold: 3 });
  expect(web).toMatchObject({ imagePullPolicy: "IfNotPresent", terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File" });
});

test("a container port written without a protocol is TCP, so kubectl describe prints 8080/TCP", () => {
  const spec = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: { containers: [{ name: "web", image: "busybox:1", ports: [{ containerPort: 8080, name: "http" }, { containerPort: 53, protocol: "UDP" }] }] },
    },
    { file: "web.yaml", source: "/m/web.yaml", node: "lab" },
  );
  const [web] = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.containers as Record<string, any>[];
  expect(web!.ports).toEqual([
    { containerPort: 8080, name: "http", protocol: "TCP" },
    { containerPort: 53, protocol: "UDP" },
  ]);
});

test("a record checkpointed before resources were read serves the resources its manifest wrote, as the API server stores them", () => {
  const spec = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "demo" },
      spec: { containers: [{ name: "web", image: "busybox:1", resources: { limits: { cpu: "0.5" } } }] },
    },
    { file: "web.yaml", source: "/m/web.yaml", node: "lab" },
  );
  delete spec.containers[0]!.resources;
  const [web] = servedPod(newPodRecord(spec, 0), { runtimeName: "fake" }).spec.containers as Record<string, any>[];
  expect(web!.resources).toEqual({ limits: { cpu: "500m" }, requests: { cpu: "500m" } });
});
