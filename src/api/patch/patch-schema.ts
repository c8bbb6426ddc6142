/**
 * What strategic merge patch needs to know of a field: whether a list merges by key or is replaced
 * whole, and the schema of what it holds. Read from the OpenAPI document we serve (the same
 * `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` kubectl reads to build its
 * patches), so the server and the client agree on one source.
 */
import schemas from "../../manifest/v1-schemas.json";

type Schema = Record<string, unknown>;
const SCHEMAS = schemas as Record<string, Schema>;
const REF_PREFIX = "#/components/schemas/";

export interface FieldPatchMeta {
  /** `merge` merges a list by `mergeKey` (or, for primitives, as a set); else the list is replaced. */
  strategies: string[];
  mergeKey?: string;
  /** The schema of the field's value (for a list, of its elements); undefined for a free-form field. */
  schema?: PatchSchema;
}

export class PatchSchema {
  private constructor(private readonly schema: Schema) {}

  /** The schema of a kind in core/v1 (`Pod`). */
  static of(id: string): PatchSchema {
    const schema = SCHEMAS[id];
    if (!schema) throw new Error(`no schema ${id} in the OpenAPI document`);
    return new PatchSchema(schema);
  }

  static readonly POD = PatchSchema.of("io.k8s.api.core.v1.Pod");

  /** How the field `name` of an object of this schema patches. */
  field(name: string): FieldPatchMeta {
    const properties = this.schema.properties as Record<string, Schema> | undefined;
    const property = properties?.[name] ?? (typeof this.schema.additionalProperties === "object" ? (this.schema.additionalProperties as Schema) : undefined);
    if (!property) return { strategies: [] };
    const strategy = property["x-kubernetes-patch-strategy"];
    const mergeKey = property["x-kubernetes-patch-merge-key"];
    const value = property.type === "array" ? (property.items as Schema) : property;
    const schema = resolve(value);
    return {
      strategies: typeof strategy === "string" ? strategy.split(",") : [],
      ...(typeof mergeKey === "string" && { mergeKey }),
      ...(schema && { schema: new PatchSchema(schema) }),
    };
  }
}

/** A schema's own object schema, through `$ref` and the `allOf: [{$ref}]` that carries a description. */
function resolve(schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  const ref = (schema.$ref as string | undefined) ?? ((schema.allOf as Schema[] | undefined)?.[0]?.$ref as string | undefined);
  if (ref) return SCHEMAS[ref.slice(REF_PREFIX.length)];
  return schema.type === "object" ? schema : undefined;
}
