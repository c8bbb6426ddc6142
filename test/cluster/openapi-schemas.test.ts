/**
 * The schemas the agent embeds (src/manifest/v1-schemas.json: its OpenAPI document for kubectl,
 * strategic merge patch, and the manifest reader's known fields) are v1.37.2's own: exactly what
 * scripts/openapi-schemas.ts keeps of the document the running API server of that release serves.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describeCluster } from "../cluster-fixtures.ts";
import { generateSchemas, renderSchemas, SCHEMAS_JSON, servedSchemas } from "../../scripts/openapi-schemas.ts";

describeCluster("the embedded v1 schemas", (env) => {
  test("are what scripts/openapi-schemas.ts keeps of the v1.37.2 API server's /openapi/v3/api/v1", () => {
    const served = generateSchemas(servedSchemas(join(env.bin, "kubectl"), env.admin));
    expect(Object.keys(served).length).toBeGreaterThan(100);
    const embedded = JSON.parse(readFileSync(SCHEMAS_JSON, "utf8")) as Record<string, unknown>;
    // Schema by schema first, so a difference names its schema.
    for (const [id, schema] of Object.entries(served)) expect({ id, schema: embedded[id] }).toEqual({ id, schema });
    expect(readFileSync(SCHEMAS_JSON, "utf8")).toBe(renderSchemas(served));
  });
});
