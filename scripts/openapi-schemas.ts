/**
 * Generates src/manifest/v1-schemas.json: the OpenAPI v3 schemas of core/v1 Pod, Node, Event,
 * ConfigMap, Secret and ServiceAccount and everything they reference, exactly as the v1.37.2 API
 * server serves them at /openapi/v3/api/v1 (with the enums and union members its document carries,
 * which the release's static api__v1_openapi.json leaves out). Only the schemas those kinds reach
 * are kept, so the binary embeds a few hundred kilobytes, not the whole API. It asks the control
 * plane scripts/cluster-env runs:
 *
 *   eval "$(./scripts/cluster-env up)"
 *   node_modules/.bin/bun scripts/openapi-schemas.ts           # rewrites the JSON
 *   node_modules/.bin/bun scripts/openapi-schemas.ts --check   # exits 1 if the JSON is stale
 *
 * test/cluster/openapi-schemas.test.ts holds the committed file to what the API server serves.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

export type Schema = Record<string, unknown>;

const ROOT = resolve(import.meta.dir, "..");
export const SCHEMAS_JSON = join(ROOT, "src/manifest/v1-schemas.json");
const REF_PREFIX = "#/components/schemas/";

/**
 * The kinds `kubectl explain` can ask about, their lists (the list operations return them), and the
 * body and answer types the document's write operations name.
 */
export const ROOT_SCHEMAS = [
  ...["Pod", "PodList", "Node", "NodeList", "Event", "EventList", "ConfigMap", "ConfigMapList", "Secret", "SecretList", "ServiceAccount", "ServiceAccountList"].map((kind) => `io.k8s.api.core.v1.${kind}`),
  ...["Patch", "Status"].map((kind) => `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`),
];

/** The schemas of the core/v1 document an API server serves, read with its kubectl as `kubeconfig`'s user. */
export function servedSchemas(kubectlPath: string, kubeconfig: string): Record<string, Schema> {
  const result = Bun.spawnSync([kubectlPath, "--kubeconfig", kubeconfig, "get", "--raw", "/openapi/v3/api/v1"], { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`kubectl get --raw /openapi/v3/api/v1: ${result.stderr.toString().trim()}`);
  return (JSON.parse(result.stdout.toString()) as { components: { schemas: Record<string, Schema> } }).components.schemas;
}

/** Every schema the roots reach in `all`, keyed by id, in sorted order so the output is stable. */
export function generateSchemas(all: Record<string, Schema>, roots: readonly string[] = ROOT_SCHEMAS): Record<string, Schema> {
  const kept = new Map<string, Schema>();
  const pending = [...roots];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (kept.has(id)) continue;
    const schema = all[id];
    if (!schema) throw new Error(`the document has no schema ${id}`);
    kept.set(id, schema);
    pending.push(...references(schema));
  }
  return Object.fromEntries([...kept].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function references(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(references);
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]) => (key === "$ref" && typeof child === "string" && child.startsWith(REF_PREFIX) ? [child.slice(REF_PREFIX.length)] : references(child)));
}

export function renderSchemas(schemas: Record<string, Schema>): string {
  return `${JSON.stringify(schemas)}\n`;
}

if (import.meta.main) {
  const bin = process.env.MINIKUBELET_CLUSTER_BIN;
  const kubeconfig = process.env.KUBECONFIG;
  if (!bin || !kubeconfig) {
    console.error('no control plane: run eval "$(./scripts/cluster-env up)" first');
    process.exit(2);
  }
  const rendered = renderSchemas(generateSchemas(servedSchemas(join(bin, "kubectl"), kubeconfig)));
  if (process.argv.includes("--check")) {
    if (readFileSync(SCHEMAS_JSON, "utf8") !== rendered) {
      console.error(`${relative(ROOT, SCHEMAS_JSON)} is stale: run node_modules/.bin/bun scripts/openapi-schemas.ts`);
      process.exit(1);
    }
  } else {
    writeFileSync(SCHEMAS_JSON, rendered);
    console.error(`wrote ${relative(ROOT, SCHEMAS_JSON)} (${Buffer.byteLength(rendered)} bytes)`);
  }
}
