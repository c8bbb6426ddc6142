/**
 * Ephemeral containers (`kubectl debug POD`, issue 23): the pods/ephemeralcontainers subresource
 * adds a container to a running API pod and may change nothing else; the loop starts it once in
 * the pod's sandbox (joining its target's processes), never restarts it, and reports it in
 * ephemeralContainerStatuses apart from the pod's phase and readiness. A static pod has none.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describePodText } from "../../src/cli/describe/describe-pod.ts";
import { loadManifest } from "../../src/manifest/source.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { agentApi as sharedAgentApi } from "../agent-api-fixtures.ts";

function agentApi(dir: string) {
  const api = sharedAgentApi(dir);
  return { ...api, patch: (name: string, body: unknown, method = "PATCH") => api.write("ephemeralcontainers", name, body, method) };
}

// The harness's API issues no ServiceAccount tokens: its pods opt out of the admission's token volume.
const WEB = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { automountServiceAccountToken: false, containers: [{ name: "web", image: "busybox", command: ["sleep", "3600"] }] } };
const debugger_ = (extra: Record<string, unknown> = {}) => ({ name: "debugger", image: "busybox", command: ["sh"], stdin: true, tty: true, targetContainerName: "web", ...extra });

describe("the ephemeralcontainers subresource", () => {
  test("a debug container added to a running pod is started once in its sandbox, aimed at its target, and reported apart", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    await a.send("POST", "/api/v1/namespaces/default/pods", WEB);
    await a.sync();
    const web = a.h.runtime.running("web")!;
    const answer = await a.patch("web", { spec: { ephemeralContainers: [debugger_()] } });
    expect(answer.status).toBe(200);
    // Stored as decoded: the API's container defaults, and the rest of the pod untouched.
    expect(answer.body.spec.ephemeralContainers).toEqual([
      { ...debugger_(), imagePullPolicy: "Always", terminationMessagePath: "/dev/termination-log", terminationMessagePolicy: "File", resources: {} },
    ]);
    expect(answer.body.spec.containers).toEqual((await a.get("web")).body.spec.containers);
    await a.sync();
    const started = a.h.runtime.running("debugger")!;
    expect(started.config.kind).toBe("ephemeral");
    expect(started.config.targetContainerId).toBe(web.id);
    expect(a.h.runtime.running("web")!.id).toBe(web.id);
    const served = (await a.get("web")).body;
    expect(served.status.ephemeralContainerStatuses).toMatchObject([{ name: "debugger", state: { running: {} }, restartCount: 0, ready: false }]);
    // No probe runs on it, so the prober never sets started.
    expect(served.status.ephemeralContainerStatuses[0]).not.toHaveProperty("started");
    expect(served.status.containerStatuses.map((c: { name: string }) => c.name)).toEqual(["web"]);
    expect(served.status.phase).toBe("Running");
    // describe lists it after the containers, as kubectl's describeContainers("Ephemeral Containers", ...) does.
    const record = a.h.api.store.podRecord(served.metadata.uid)!;
    const text = describePodText({ pod: served, spec: record.spec, events: [], attempts: [], now: 0, utcOffsetMinutes: 0 });
    const lines = text.split("\n");
    const section = lines.indexOf("Ephemeral Containers:");
    expect(section).toBeGreaterThan(lines.indexOf("Containers:"));
    expect(lines.slice(section + 1, section + 3)).toEqual(["  debugger:", expect.stringMatching(/^    Container ID:\s+fake:\/\//)]);
    expect(lines.slice(section).find((line) => line.startsWith("    Ready:"))).toMatch(/False$/);
    // It ends, and stays ended: an ephemeral container is never restarted, nor is the pod disturbed.
    a.h.runtime.finish(started.id, 1);
    await a.h.advance(60);
    expect(a.h.runtime.startsOf("debugger")).toBe(1);
    const after = (await a.get("web")).body;
    expect(after.status.ephemeralContainerStatuses[0].state.terminated).toMatchObject({ exitCode: 1 });
    expect(after.status.phase).toBe("Running");
    expect(after.status.conditions.find((c: { type: string }) => c.type === "Ready").status).toBe("True");
    a.h.close();
  });

  test("nothing but ephemeral containers changes, and those only by addition; each refusal is the API server's", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    await a.send("POST", "/api/v1/namespaces/default/pods", WEB);
    await a.sync();
    // The rest of the patch is dropped, as dropNonEphemeralContainerUpdates drops it.
    const answer = await a.patch("web", { metadata: { labels: { sneaky: "yes" } }, spec: { containers: [{ name: "web", image: "busybox:2" }], ephemeralContainers: [debugger_()] } });
    expect(answer.status).toBe(200);
    expect(answer.body.metadata.labels?.sneaky).toBeUndefined();
    expect(answer.body.spec.containers[0].image).toBe("busybox");
    // A patch without $setElementOrder puts a new element first, as apimachinery's merge does.
    const withPorts = await a.patch("web", { spec: { ephemeralContainers: [debugger_({ name: "second", ports: [{ containerPort: 80 }], livenessProbe: { exec: { command: ["true"] } } })] } });
    expect(withPorts.status).toBe(422);
    expect(withPorts.body.details.causes).toEqual([
      { reason: "FieldValueForbidden", message: "Forbidden: cannot be set for an Ephemeral Container", field: "spec.ephemeralContainers[0].livenessprobe" },
      { reason: "FieldValueForbidden", message: "Forbidden: cannot be set for an Ephemeral Container", field: "spec.ephemeralContainers[0].ports" },
    ]);
    const badTarget = await a.patch("web", { spec: { ephemeralContainers: [debugger_({ name: "third", targetContainerName: "nope" })] } });
    expect(badTarget.body.details.causes).toEqual([{ reason: "FieldValueNotFound", message: 'Not found: "nope"', field: "spec.ephemeralContainers[0].targetContainerName" }]);
    const removed = await a.patch("web", { ...WEB, spec: { ...WEB.spec, ephemeralContainers: [] } }, "PUT");
    expect(removed.status).toBe(422);
    expect(removed.body.message).toBe('Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be removed');
    const changed = await a.patch("web", { spec: { ephemeralContainers: [{ name: "debugger", image: "busybox:9" }] } });
    expect(changed.status).toBe(422);
    expect(changed.body.message).toBe('Pod "web" is invalid: spec.ephemeralContainers: Forbidden: existing ephemeral containers "debugger" may not be changed');
    a.h.close();
  });

  test("a create may not carry ephemeral containers; a static pod has none", async () => {
    using dir = tempDir();
    const a = agentApi(dir.path);
    const created = await a.send("POST", "/api/v1/namespaces/default/pods", { ...WEB, spec: { ...WEB.spec, ephemeralContainers: [debugger_()] } });
    expect(created.status).toBe(422);
    expect(created.body.message).toBe('Pod "web" is invalid: spec.ephemeralContainers: Forbidden: cannot be set on create');
    const file = join(dir.path, "static.yaml");
    writeFileSync(file, "apiVersion: v1\nkind: Pod\nmetadata: {name: static, namespace: default}\nspec:\n  containers: [{name: web, image: busybox, command: [sleep, '60']}]\n");
    const spec = loadManifest(file, "lab");
    await a.sync(desired(spec));
    const refused = await a.patch("static-lab", { spec: { ephemeralContainers: [debugger_({ targetContainerName: undefined })] } });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      reason: "Invalid",
      message: 'Pod "static-lab" is invalid: []: Forbidden: static pods do not support ephemeral containers',
      details: { name: "static-lab", kind: "Pod", causes: [{ reason: "FieldValueForbidden", message: "Forbidden: static pods do not support ephemeral containers", field: "[]" }] },
    });
    a.h.close();
  });
});
