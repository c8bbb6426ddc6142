/**
 * The deprecated watch paths (`/api/v1/watch/...`), which the API server still serves as the same
 * stream as `?watch=true` on the collection: all namespaces, one namespace, and one object by name
 * (a metadata.name field selector, which an explicit selector must agree with).
 */
import { describe, expect, test } from "bun:test";
import type { Route } from "../../src/api/http/http.ts";
import { apiRoutes } from "../../src/api/routes.ts";
import { startApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { ApiError } from "../../src/api/http/status.ts";
import { deprecatedWatchRoutes } from "../../src/api/resources/watch-paths.ts";
import { desired, pod } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { apiHarness, apiRequest, readWatch, settle } from "../api-watch-fixtures.ts";

/** The route serving `path` (its `:params` filled) called as the server would. */
function get(h: ReturnType<typeof apiHarness>, path: string): Response {
  const url = new URL(path, "http://127.0.0.1");
  for (const route of deprecatedWatchRoutes as Route[]) {
    const pattern = route.path.split("/");
    const parts = url.pathname.split("/");
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    if (!pattern.every((part, i) => (part.startsWith(":") ? ((params[part.slice(1)] = parts[i]!), true) : part === parts[i]))) continue;
    return route.handle(apiRequest(path, { params }), h.api) as Response;
  }
  throw new Error(`no route for ${path}`);
}

async function twoNamespaces(dir: string) {
  const h = apiHarness(dir);
  await h.kubelet.sync(desired(pod({ name: "web" }), pod({ name: "db" }), pod({ name: "api", namespace: "prod" })));
  await h.advance(0.5);
  return h;
}

const names = (lines: { type: string; object: any }[]) => lines.map((line) => `${line.type} ${line.object.metadata.namespace}/${line.object.metadata.name}`);

describe("deprecated watch paths serve the ?watch=true stream", () => {
  test("pods in all namespaces, in one namespace, and one pod by name; the stream stays open", async () => {
    using dir = tempDir();
    const h = await twoNamespaces(dir.path);
    const all = readWatch(get(h, "/api/v1/watch/pods"));
    const demo = readWatch(get(h, "/api/v1/watch/namespaces/demo/pods"));
    const one = readWatch(get(h, "/api/v1/watch/namespaces/demo/pods/web-lab"));
    await settle();
    expect(names(all.lines)).toEqual(["ADDED demo/db-lab", "ADDED demo/web-lab", "ADDED prod/api-lab"]);
    expect(names(demo.lines)).toEqual(["ADDED demo/db-lab", "ADDED demo/web-lab"]);
    expect(names(one.lines)).toEqual(["ADDED demo/web-lab"]);
    await h.kubelet.sync(desired(pod({ name: "db" }), pod({ name: "api", namespace: "prod" })));
    await h.advance(35);
    await settle();
    expect(names(one.lines).at(-1)).toBe("DELETED demo/web-lab");
    expect(one.state.ended).toBe(false);
    h.close();
  });

  test("events, in all namespaces and in one", async () => {
    using dir = tempDir();
    const h = await twoNamespaces(dir.path);
    const all = readWatch(get(h, "/api/v1/watch/events"));
    const prod = readWatch(get(h, "/api/v1/watch/namespaces/prod/events"));
    await settle();
    expect(all.lines.length).toBeGreaterThan(prod.lines.length);
    expect(prod.lines.length).toBeGreaterThan(0);
    expect(new Set(prod.lines.map((line) => line.object.involvedObject.name))).toEqual(new Set(["api-lab"]));
    h.close();
  });

  test("a name path with a field selector naming another object is the API server's 400", async () => {
    using dir = tempDir();
    const h = await twoNamespaces(dir.path);
    expect(() => get(h, "/api/v1/watch/namespaces/demo/pods/web-lab?fieldSelector=metadata.name%3Ddb-lab")).toThrow(new ApiError(400, "BadRequest", "fieldSelector metadata.name doesn't match requested name"));
    expect(() => get(h, "/api/v1/watch/namespaces/demo/pods/web-lab?fieldSelector=status.phase%3DRunning")).toThrow("fieldSelector metadata.name doesn't match requested name");
    const agreeing = readWatch(get(h, "/api/v1/watch/namespaces/demo/pods/web-lab?fieldSelector=metadata.name%3Dweb-lab"));
    await settle();
    expect(names(agreeing.lines)).toEqual(["ADDED demo/web-lab"]);
    h.close();
  });
});

test("the server routes a deprecated watch path to its stream", async () => {
  using dir = tempDir();
  const h = await twoNamespaces(dir.path);
  const credentials = ensureCredentials(h.dbPath);
  const server = startApiServer({ listen: { hostname: "127.0.0.1", port: 0 }, context: h.api, routes: apiRoutes, tls: { cert: credentials.certPem, key: credentials.keyPem }, token: credentials.token, log: () => {} });
  const abort = new AbortController();
  try {
    const response = await fetch(`${server.url}/api/v1/watch/namespaces/prod/pods`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem }, signal: abort.signal } as RequestInit);
    expect(response.status).toBe(200);
    // The first line, read as it arrives (the stream never ends by itself).
    const reader = response.body!.getReader();
    let text = "";
    while (!text.trim()) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    while (!text.trimStart().includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
    const first = JSON.parse(text.trimStart().split("\n")[0]!);
    expect(`${first.type} ${first.object.metadata.namespace}/${first.object.metadata.name}`).toBe("ADDED prod/api-lab");
  } finally {
    abort.abort();
    await server.stop();
    h.close();
  }
});
