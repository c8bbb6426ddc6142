/**
 * Records how real kubectl encodes a Pod with every field of its spec set: serves such a pod
 * (built from src/manifest/v1-schemas.json, each string and number unique) to
 * `kubectl debug web --copy-to`, which reads it into Go's types and writes its copy back: kubectl
 * 1.33 as protobuf, kubectl 1.31 as JSON. The unit tests decode the first and compare it with the
 * second field by field. `zero` sets every field to its zero value instead, which tells a Go value
 * (omitted from JSON when zero) from a pointer (printed), a difference the wire does not show.
 *
 *   node_modules/.bin/bun scripts/kubectl-every-field.ts OUTDIR
 *
 * writes OUTDIR/{every,zero}.served.json, .1.33.bin and .1.31.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import schemas from "../src/manifest/v1-schemas.json";
import { recordCommands } from "./kubectl-bodies.ts";

type Schema = Record<string, any>;
const definitions = schemas as Record<string, Schema>;
const WRAPPED = /\.(Quantity|IntOrString|Time|MicroTime)$/;

function refOf(property: Schema): string | undefined {
  const ref: string | undefined = property.$ref ?? property.allOf?.[0]?.$ref;
  return ref?.replace("#/components/schemas/", "");
}

/** Builds values: `every` gives each leaf a unique value (strings "s12x", numbers 112, true), `zero` its zero. */
class PodBuilder {
  private counter = 0;
  constructor(private readonly mode: "every" | "zero") {}

  value(property: Schema): unknown {
    const ref = refOf(property);
    if (ref && WRAPPED.test(ref)) return this.wrapped(ref);
    if (ref) return this.object(ref);
    if (property.type === "array") return [this.value(property.items)];
    if (property.type === "object" && property.additionalProperties) return { [`k${++this.counter}x`]: this.value(property.additionalProperties) };
    if (this.mode === "zero") return property.type === "string" ? "" : property.type === "boolean" ? false : 0;
    if (property.type === "string") return `s${++this.counter}x`;
    if (property.type === "boolean") return true;
    return 100 + ++this.counter;
  }

  object(name: string): Schema {
    return Object.fromEntries(Object.entries(definitions[name]!.properties ?? {}).map(([key, property]) => [key, this.value(property as Schema)]));
  }

  private wrapped(ref: string): unknown {
    const n = ++this.counter;
    if (ref.endsWith("Quantity")) return this.mode === "zero" ? "0" : `${n}m`;
    if (ref.endsWith("IntOrString")) return this.mode === "zero" ? 0 : `p${n}x`;
    const iso = new Date((1.7e9 + n) * 1000).toISOString();
    return ref.endsWith("MicroTime") ? iso.replace(".000Z", ".000000Z") : iso.replace(".000Z", "Z");
  }
}

// Keeps what `debug --copy-to` would otherwise drop (labels, probes, the node); ephemeral containers go regardless.
const COPY = ["debug", "web", "--copy-to=web-copy", "--set-image=nomatch=busybox", "--keep-labels", "--keep-annotations", "--keep-liveness", "--keep-readiness", "--keep-startup", "--same-node", "--share-processes=false"];

async function main(outDir: string): Promise<void> {
  mkdirSync(outDir, { recursive: true });
  for (const mode of ["every", "zero"] as const) {
    const pod = { kind: "Pod", apiVersion: "v1", metadata: { name: "web", namespace: "default", labels: { app: "web" }, annotations: { note: "x" } }, spec: new PodBuilder(mode).object("io.k8s.api.core.v1.PodSpec"), status: {} };
    writeFileSync(join(outDir, `${mode}.served.json`), JSON.stringify(pod, null, 1) + "\n");
    for (const [version, suffix] of [["1.33", "bin"], ["1.31", "json"]] as const) {
      const [run] = await recordCommands(`/usr/lib/google-cloud-sdk/bin/kubectl.${version}`, pod, [["copy", COPY]]);
      if (!run || run.writes.length !== 1) throw new Error(`kubectl ${version} (${mode}): exit ${run?.status}: ${run?.stderr}`);
      writeFileSync(join(outDir, `${mode}.${version}.${suffix}`), run.writes[0]!.body);
      console.log(`${mode} ${version}: ${run.writes[0]!.entry.contentType} ${run.writes[0]!.body.length}B`);
    }
  }
}

if (import.meta.main) {
  const [outDir] = process.argv.slice(2);
  if (!outDir) throw new Error("usage: kubectl-every-field.ts OUTDIR");
  await main(outDir);
}
