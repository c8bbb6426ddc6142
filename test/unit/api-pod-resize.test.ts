/**
 * The agent's own pods/resize subresource (`kubectl patch --subresource resize`): it takes only the
 * containers' resources and resizePolicy, refuses what ValidatePodResize refuses in the API
 * server's words, and the loop applies the new values to the running container in place.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadManifest } from "../../src/manifest/source.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { agentApi } from "../agent-api-fixtures.ts";

const RESOURCES = { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "200m", memory: "128Mi" } };
// The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
const WEB = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { automountServiceAccountToken: false, containers: [{ name: "web", image: "busybox", command: ["sleep", "3600"], resources: RESOURCES }] } };
const resize = (resources: unknown, extra: Record<string, unknown> = {}) => ({ spec: { containers: [{ name: "web", resources, ...extra }] } });

describe("the resize subresource", () => {
  test("new cpu and memory are stored and applied to the running container in place; other changes in the request are dropped", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    await a.send("POST", "/api/v1/namespaces/default/pods", WEB);
    await a.sync();
    const before = a.h.runtime.running("web")!;
    const bigger = { requests: { cpu: "150m", memory: "64Mi" }, limits: { cpu: "300m", memory: "192Mi" } };
    const answer = await a.write("resize", "web", resize(bigger, { image: "nginx" }));
    expect(answer.status).toBe(200);
    expect(answer.body.spec.containers[0]).toMatchObject({ image: "busybox", resources: bigger });
    await a.sync();
    expect(a.h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual(["resize web cpu=150m/300m memory=64Mi/192Mi"]);
    expect(a.h.runtime.running("web")!.id).toBe(before.id);
    const served = (await a.get("web")).body;
    expect(served.status.containerStatuses[0]).toMatchObject({ restartCount: 0, resources: bigger, allocatedResources: bigger.requests });
    a.h.close();
  });

  test("refused as the API server refuses it: a QoS class change, a removed limit, another resource changed, a static pod", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    await a.send("POST", "/api/v1/namespaces/default/pods", WEB);
    await a.sync();
    const guaranteed = await a.write("resize", "web", resize({ requests: { cpu: "200m", memory: "128Mi" }, limits: { cpu: "200m", memory: "128Mi" } }));
    expect(guaranteed.status).toBe(422);
    expect(guaranteed.body.message).toBe('Pod "web" is invalid: spec: Invalid value: "Burstable": Pod QOS Class may not change as a result of resizing');
    // A PUT of the whole pod, as `kubectl replace --subresource resize` sends it.
    const served = (await a.get("web")).body;
    served.spec.containers[0].resources.limits = { cpu: "200m" };
    const removed = await a.write("resize", "web", served, "PUT");
    expect(removed.status).toBe(422);
    expect(removed.body.details.causes).toEqual([{ reason: "FieldValueForbidden", field: "spec.containers[0].resources.limits", message: "Forbidden: resource limits cannot be removed" }]);
    const storage = await a.write("resize", "web", resize({ requests: { ...RESOURCES.requests, "ephemeral-storage": "1Gi" }, limits: RESOURCES.limits }));
    expect(storage.status).toBe(422);
    expect(storage.body.message).toBe('Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
    const policy = await a.write("resize", "web", resize(RESOURCES, { resizePolicy: [{ resourceName: "cpu", restartPolicy: "RestartContainer" }] }));
    expect(policy.body.message).toBe('Pod "web" is invalid: spec: Forbidden: only cpu and memory resources are mutable');
    expect(a.h.runtime.calls.filter((c) => c.startsWith("resize"))).toEqual([]);

    const file = join(dir.path, "static.yaml");
    writeFileSync(file, "apiVersion: v1\nkind: Pod\nmetadata: {name: static, namespace: default}\nspec:\n  containers: [{name: web, image: busybox, command: [sleep, '60']}]\n");
    await a.sync(desired(loadManifest(file, "lab")));
    const staticPod = await a.write("resize", "static-lab", resize(RESOURCES));
    expect(staticPod.status).toBe(422);
    expect(staticPod.body.message).toBe('Pod "static-lab" is invalid: []: Forbidden: static pods cannot be resized');
    a.h.close();
  });
});
