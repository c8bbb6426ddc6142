import { namespaceRoutes } from "../src/api/resources/namespaces/namespaces-api.ts";
import { podWriteRoutes } from "../src/api/resources/pods/pods-write-routes.ts";
import { PodSources } from "../src/config/pod-sources.ts";
import type { PodKey, PodSpec } from "../src/manifest/types.ts";
import { apiHarness } from "./api-watch-fixtures.ts";
import { call } from "./api-objects-fixtures.ts";

const routes = [...namespaceRoutes, ...podWriteRoutes];

/** The agent (fake runtime, fake clock), its API, and `run`'s pod sources; `sync` is one pass over the files given and the API's pods. */
export function namespacesAgent(dir: string) {
  const h = apiHarness(dir);
  const sources = new PodSources({ db: h.agent.db, store: h.store, node: "lab", rules: { runtime: "process" }, log: () => {} });
  const changed = sources.writes.changed;
  // The agent's store announces each commit to the API's watches: its writes here tell the feed too.
  sources.writes.changed = () => (changed(), h.feed.publish(0));
  const api = { ...h.api, podWrites: sources.writes };
  let files: PodSpec[] = [];
  const sync = async (...filePods: PodSpec[]) => {
    if (filePods.length > 0) files = filePods;
    const desired = () => sources.desired(new Map<PodKey, PodSpec>(files.map((spec) => [spec.key, spec])));
    await h.kubelet.sync(desired());
    if (sources.api.removeFinished((key, uid) => h.kubelet.pods.get(key)?.spec.uid === uid)) await h.kubelet.sync(desired());
    h.feed.publish(0);
  };
  const send = (method: string, path: string, body?: unknown, query?: Record<string, string>) => call(routes, method, path, api, { body: body === undefined ? "" : JSON.stringify(body), ...(query && { query }) });
  return { h, sources, api, sync, send, setFiles: (...specs: PodSpec[]) => (files = specs) };
}

