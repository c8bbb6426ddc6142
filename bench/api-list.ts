/**
 * List latency of the pods API for N pods (default 1,000) in a real SQLite store: what
 * `kubectl get pods -A` (a Table, limit=500, then the next page), `-o json` (a PodList) and a
 * label-selected list cost on the server, from the request to the serialized body. Figures only.
 *   bun bench/api-list.ts [PODS] [ROUNDS]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { podRoutes } from "../src/api/resources/pods/pods-api.ts";
import { storeHarness } from "../test/store-fixtures.ts";
import { container, desired, pod } from "../test/pod-builder.ts";
import { apiContext, TABLE_ACCEPT } from "../test/api-objects-fixtures.ts";
import type { ApiRequest } from "../src/api/http/http.ts";

const count = Number(process.argv[2] ?? 1000);
const rounds = Number(process.argv[3] ?? 20);
const dir = mkdtempSync(join(tmpdir(), "mk-bench-api-"));
const h = storeHarness(dir);
const pods = Array.from({ length: count }, (_, i) => ({ ...pod({ name: `p${i}`, containers: [container("app")] }), labels: { app: i % 10 === 0 ? "web" : "batch" } }));
await h.kubelet.sync(desired(...pods));
await h.kubelet.idle();
const api = apiContext(h.dbPath, h.clock);
const list = podRoutes.find((route) => route.path === "/api/v1/pods")!;

function request(accept: string, query: Record<string, string>): ApiRequest {
  const url = new URL("https://127.0.0.1:6443/api/v1/pods");
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return { method: "GET", url, headers: new Headers({ accept }), params: {}, query: url.searchParams, signal: new AbortController().signal, body: async () => new Uint8Array(), upgrade: () => undefined };
}

async function timed(label: string, accept: string, query: Record<string, string>): Promise<void> {
  const samples: number[] = [];
  let bytes = 0;
  for (let round = 0; round < rounds + 2; round++) {
    const before = performance.now();
    const body = await (await list.handle(request(accept, query), api)).text();
    const ms = performance.now() - before;
    bytes = body.length;
    if (round >= 2) samples.push(ms); // the first two warm the statement cache and the JIT
  }
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(samples.length / 2)]!;
  const p95 = samples[Math.min(samples.length - 1, Math.floor(samples.length * 0.95))]!;
  console.log(`${label.padEnd(40)} median ${median.toFixed(1).padStart(7)} ms   p95 ${p95.toFixed(1).padStart(7)} ms   ${(bytes / 1024).toFixed(0).padStart(6)} KiB`);
}

console.log(`${count} pods, ${rounds} rounds each`);
await timed("Table, limit=500 (kubectl get pods -A)", TABLE_ACCEPT, { limit: "500" });
await timed("Table, all pods", TABLE_ACCEPT, {});
await timed("Table, includeObject=Object", TABLE_ACCEPT, { includeObject: "Object" });
await timed("PodList JSON, all pods (-o json)", "application/json", {});
await timed("PodList JSON, labelSelector app=web", "application/json", { labelSelector: "app=web" });
await timed("PodList JSON, fieldSelector by name", "application/json", { fieldSelector: "metadata.name=p500-lab" });
api[Symbol.dispose]();
h.kubelet.stop();
h.agent.close();
rmSync(dir, { recursive: true, force: true });
