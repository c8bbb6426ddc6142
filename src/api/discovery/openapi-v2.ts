/**
 * The same schemas as an OpenAPI v2 document, as JSON and in the protobuf form (gnostic's
 * openapi.v2.Document) that kubectl 1.27 and 1.28 fetch from `/openapi/v2` before every `explain`: a
 * 404 there fails the command. It carries what kubectl reads: the definitions with their descriptions,
 * types, references, required fields and group-version-kinds (no paths: kubectl from 1.27 on looks
 * for operations in the v3 document).
 */
import { buildOpenApiDocument } from "./openapi-document.ts";
import { ProtoWriter } from "../protobuf/writer.ts";

type Schema = Record<string, any>;

// Field numbers of gnostic's openapi.v2 messages (openapiv2/OpenAPIv2.proto).
const DOCUMENT = { swagger: 1, info: 2, definitions: 9 };
const INFO = { title: 1, version: 2 };
const NAMED = { name: 1, value: 2 };
const SCHEMA = { ref: 1, format: 2, description: 4, required: 19, additionalProperties: 21, type: 22, items: 23, properties: 25, vendorExtension: 31 };
const ANY_YAML = 2;

/** The v3 schema's single reference: `$ref`, or the `allOf: [{$ref}]` v3 needs to carry a description. */
function referenceOf(schema: Schema): string | undefined {
  if (schema.$ref) return schema.$ref;
  if (Array.isArray(schema.allOf) && schema.allOf.length === 1 && schema.allOf[0].$ref) return schema.allOf[0].$ref;
  return undefined;
}

/** One v3 schema as v2 spells it: references beside their description, and no oneOf. */
function v2Schema(schema: Schema): Schema {
  const out: Schema = {};
  const ref = referenceOf(schema);
  if (ref) out.$ref = ref.replace("#/components/schemas/", "#/definitions/");
  if (schema.description) out.description = schema.description;
  // Quantity and IntOrString are strings in v2, as in the API server's v2 document.
  const type = ref ? undefined : (schema.type ?? (schema.oneOf ? "string" : undefined));
  if (type) out.type = type;
  if (schema.format) out.format = schema.format;
  if (schema.required) out.required = schema.required;
  if (schema.items) out.items = v2Schema(schema.items);
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") out.additionalProperties = v2Schema(schema.additionalProperties);
  if (schema.properties) out.properties = Object.fromEntries(Object.entries<Schema>(schema.properties).map(([name, property]) => [name, v2Schema(property)]));
  for (const [key, value] of Object.entries(schema)) if (key.startsWith("x-kubernetes-")) out[key] = value;
  return out;
}

/** The v2 (swagger) document of the schemas the v3 document serves, as JSON. */
export function buildOpenApiV2Document(): Schema {
  const { info, components } = buildOpenApiDocument() as { info: Schema; components: { schemas: Record<string, Schema> } };
  const definitions = Object.fromEntries(Object.entries(components.schemas).map(([name, schema]) => [name, v2Schema(schema)]));
  return { swagger: "2.0", info, paths: {}, definitions };
}

function writeSchema(writer: ProtoWriter, schema: Schema): void {
  writer.string(SCHEMA.ref, schema.$ref);
  writer.string(SCHEMA.format, schema.format);
  writer.string(SCHEMA.description, schema.description);
  for (const name of schema.required ?? []) writer.string(SCHEMA.required, name);
  if (schema.additionalProperties) writer.message(SCHEMA.additionalProperties, (item) => item.message(1, (inner) => writeSchema(inner, schema.additionalProperties)));
  if (schema.type) writer.message(SCHEMA.type, (item) => item.string(1, schema.type));
  if (schema.items) writer.message(SCHEMA.items, (item) => item.message(1, (inner) => writeSchema(inner, schema.items)));
  if (schema.properties) {
    writer.message(SCHEMA.properties, (properties) => {
      for (const [name, property] of Object.entries<Schema>(schema.properties)) {
        properties.message(1, (named) => named.string(NAMED.name, name).message(NAMED.value, (value) => writeSchema(value, property)));
      }
    });
  }
  // Vendor extensions (the kind, the patch strategies kubectl 1.27's apply reads) travel as YAML text; JSON is YAML.
  for (const [key, value] of Object.entries(schema)) {
    if (!key.startsWith("x-kubernetes-")) continue;
    writer.message(SCHEMA.vendorExtension, (named) => named.string(NAMED.name, key).message(NAMED.value, (any) => any.string(ANY_YAML, JSON.stringify(value))));
  }
}

/** A v2 document (as buildOpenApiV2Document makes it) in protobuf. */
export function encodeOpenApiV2(document: Schema): Uint8Array {
  const writer = new ProtoWriter();
  writer.string(DOCUMENT.swagger, document.swagger);
  writer.message(DOCUMENT.info, (w) => w.string(INFO.title, document.info.title).string(INFO.version, document.info.version));
  writer.message(DOCUMENT.definitions, (definitions) => {
    for (const [name, schema] of Object.entries<Schema>(document.definitions)) {
      definitions.message(1, (named) => named.string(NAMED.name, name).message(NAMED.value, (value) => writeSchema(value, schema)));
    }
  });
  return writer.finish();
}
