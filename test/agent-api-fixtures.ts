/**
 * The agent's API over a fake-runtime loop whose pod writes go to its store, wired as `run` wires
 * them: requests to the API's routes (`send`, `get`), a pod subresource's PATCH or PUT (`write`,
 * answered or refused as a client sees it), and one pass of the loop over both sources (`sync`).
 */
import { apiRoutes } from "../src/api/routes.ts";
import { PodSources } from "../src/config/pod-sources.ts";
import type { PodSpec } from "../src/manifest/types.ts";
import { call } from "./api-objects-fixtures.ts";
import { apiHarness } from "./api-watch-fixtures.ts";

export function agentApi(dir: string) {
  const h = apiHarness(dir);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const api = { ...h.api, podWrites: sources.writes };
  const send = (method: string, path: string, body?: unknown) => call(apiRoutes, method, path, api, { body: body === undefined ? undefined : JSON.stringify(body) });
  /** A PATCH (strategic merge) or PUT of `subresource` of the default namespace's pod `name`. */
  const write = async (subresource: string, name: string, body: unknown, method = "PATCH") => {
    const route = apiRoutes.find((r) => r.method === method && r.path.endsWith(`/${subresource}`))!;
    const url = new URL(`https://127.0.0.1:6443/api/v1/namespaces/default/pods/${name}/${subresource}`);
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    const request = { method, url, headers: new Headers({ "content-type": method === "PUT" ? "application/json" : "application/strategic-merge-patch+json" }), params: { namespace: "default", name }, query: url.searchParams, signal: new AbortController().signal, body: async () => bytes, upgrade: () => undefined };
    try {
      const response = await route.handle(request, api);
      return { status: response.status, body: (await response.json()) as any };
    } catch (error) {
      const status = error as { code?: number; toStatus?: () => unknown };
      if (typeof status.toStatus !== "function") throw error;
      return { status: status.code!, body: status.toStatus() as any };
    }
  };
  /** One pass of the loop over both sources, `files` as the directory source read them. */
  const sync = async (files = new Map<string, PodSpec>()) => {
    await h.kubelet.sync(sources.desired(files));
    await h.advance(0.1);
  };
  return { h, send, write, sync, get: (name: string) => call(apiRoutes, "GET", `/api/v1/namespaces/default/pods/${name}`, api) };
}
