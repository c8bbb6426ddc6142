/** The new fields over the API: refusals are the API server's 422 with causes; an accepted pod serves them canonical. */
import { expect, test } from "bun:test";
import { createPod } from "../../src/api/resources/pods/pods-create.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { PodSources } from "../../src/config/pod-sources.ts";
import { apiHarness, podCreateRequest } from "../api-watch-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

const pod = (spec: Record<string, unknown>, lifecycle?: unknown) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web" },
  spec: { containers: [{ name: "app", image: "busybox", command: ["sleep", "60"], ...(lifecycle !== undefined && { lifecycle }) }], ...spec },
});

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("the request was accepted");
}

test("stopSignal without spec.os, a windows pod's SIGUSR1 and a negative sizeLimit are 422s with the API server's causes; a valid pod is served canonical", async () => {
  using dir = tempDir();
  const h = apiHarness(dir.path);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const api = { ...h.api, podWrites: sources.writes };
  const create = (body: unknown) => createPod(podCreateRequest(body), api);

  const noOS = await refusal(create(pod({}, { stopSignal: "SIGUSR1" })));
  expect(noOS.code).toBe(422);
  expect(noOS.details!.causes).toEqual([{ reason: "FieldValueForbidden", message: "Forbidden: may not be set for containers with empty `spec.os.name`", field: "spec.containers[0].lifecycle.stopSignal" }]);
  const windows = await refusal(create(pod({ os: { name: "windows" } }, { stopSignal: "SIGUSR1" })));
  expect(windows.details!.causes).toEqual([{ reason: "FieldValueNotSupported", message: 'Unsupported value: "SIGUSR1": supported values: "SIGKILL", "SIGTERM"', field: "spec.containers[0].lifecycle.stopSignal" }]);
  const negative = await refusal(create(pod({ volumes: [{ name: "scratch", emptyDir: { sizeLimit: "-1" } }] })));
  expect(negative.details!.causes).toEqual([{ reason: "FieldValueForbidden", message: "Forbidden: SizeLimit field must be a valid resource quantity", field: "spec.volumes[0].emptyDir.sizeLimit" }]);

  const created = (await (await create(pod({ os: { name: "linux" }, volumes: [{ name: "scratch", emptyDir: { medium: "Memory", sizeLimit: "1024Ki" } }] }, { stopSignal: "SIGRTMIN+1" }))).json()) as any;
  expect(created.spec.containers[0].lifecycle).toEqual({ stopSignal: "SIGRTMIN+1" });
  expect(created.spec.volumes[0].emptyDir).toEqual({ medium: "Memory", sizeLimit: "1Mi" });
  h.close();
});
