/**
 * Generates src/api/discovery/openapi-schemas.json: the OpenAPI v3 schemas of core/v1 Pod, Node, Event, ConfigMap, Secret and ServiceAccount and
 * everything they reference, with the API's own field descriptions, read from the typings that the
 * `kubernetes-models` package (MIT) generates from the Kubernetes OpenAPI document. We keep only the
 * schemas those kinds reach, so the binary embeds a few hundred kilobytes, not the whole API.
 *
 *   node_modules/.bin/bun scripts/openapi-schemas.ts           # rewrites the JSON
 *   node_modules/.bin/bun scripts/openapi-schemas.ts --check   # exits 1 if the JSON is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

export type Schema = Record<string, unknown>;

const ROOT = resolve(import.meta.dir, "..");
const NODE_MODULES = join(ROOT, "node_modules");
export const SCHEMAS_JSON = join(ROOT, "src/api/discovery/openapi-schemas.json");

/**
 * The kinds `kubectl explain` can ask about, their lists (the list operations return them), and the
 * body and answer types the document's write operations name.
 */
export const ROOT_SCHEMAS = [
  ...["Pod", "PodList", "Node", "NodeList", "Event", "EventList", "ConfigMap", "ConfigMapList", "Secret", "SecretList", "ServiceAccount", "ServiceAccountList"].map((kind) => `io.k8s.api.core.v1.${kind}`),
  ...["Patch", "Status"].map((kind) => `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`),
];

/**
 * Schemas the typings flatten to a plain TypeScript type, as the API server's document spells them:
 * kubectl prints a `$ref` to one without a `type` by its name (`<Quantity>`, `<IntOrString>`).
 */
const SCALARS: Record<string, Schema> = {
  "io.k8s.apimachinery.pkg.apis.meta.v1.Time": { type: "string", format: "date-time" },
  "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": { type: "string", format: "date-time" },
  "io.k8s.apimachinery.pkg.api.resource.Quantity": { oneOf: [{ type: "string" }, { type: "number" }] },
  "io.k8s.apimachinery.pkg.util.intstr.IntOrString": { format: "int-or-string", oneOf: [{ type: "integer" }, { type: "string" }] },
};

/** Descriptions the typings leave out (written here, not copied from anywhere). */
const OUR_DESCRIPTIONS: Record<string, string> = {
  "io.k8s.apimachinery.pkg.api.resource.Quantity":
    "Quantity is a fixed-point number with an optional SI or binary suffix, such as 100m (a tenth of a CPU), 128Mi or 1G. In JSON it is a string, or a plain number.",
  apiVersion:
    "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
  kind: "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
};

/**
 * How strategic merge patch treats a field, from the Go types' `patchStrategy` and `patchMergeKey`
 * tags (k8s.io/api core/v1, apimachinery meta/v1), which the typings do not carry. kubectl reads
 * them from the document to build a client-side apply, and our PATCH handler reads them from it to
 * apply one. A list not named here is atomic: a patch replaces it whole.
 */
export const PATCH_STRATEGIES: Record<string, Record<string, { strategy: string; mergeKey?: string }>> = {
  "io.k8s.api.core.v1.PodSpec": {
    volumes: { strategy: "merge,retainKeys", mergeKey: "name" },
    initContainers: { strategy: "merge", mergeKey: "name" },
    containers: { strategy: "merge", mergeKey: "name" },
    ephemeralContainers: { strategy: "merge", mergeKey: "name" },
    imagePullSecrets: { strategy: "merge", mergeKey: "name" },
    hostAliases: { strategy: "merge", mergeKey: "ip" },
    topologySpreadConstraints: { strategy: "merge", mergeKey: "topologyKey" },
    schedulingGates: { strategy: "merge", mergeKey: "name" },
    resourceClaims: { strategy: "merge,retainKeys", mergeKey: "name" },
  },
  ...Object.fromEntries(
    ["Container", "EphemeralContainer"].map((kind) => [
      `io.k8s.api.core.v1.${kind}`,
      {
        ports: { strategy: "merge", mergeKey: "containerPort" },
        env: { strategy: "merge", mergeKey: "name" },
        volumeMounts: { strategy: "merge", mergeKey: "mountPath" },
        volumeDevices: { strategy: "merge", mergeKey: "devicePath" },
      },
    ]),
  ),
  "io.k8s.api.core.v1.ServiceAccount": {
    secrets: { strategy: "merge", mergeKey: "name" },
  },
  "io.k8s.api.core.v1.PodStatus": {
    conditions: { strategy: "merge", mergeKey: "type" },
    podIPs: { strategy: "merge", mergeKey: "ip" },
    hostIPs: { strategy: "merge", mergeKey: "ip" },
  },
  "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
    finalizers: { strategy: "merge" },
    ownerReferences: { strategy: "merge", mergeKey: "uid" },
  },
};

/** `io.k8s.api.core.v1.Probe` -> the typings file that declares it. */
function typingsFile(id: string): string {
  const name = id.slice(id.lastIndexOf(".") + 1);
  if (id.startsWith("io.k8s.api.core.v1.")) return join(NODE_MODULES, "kubernetes-models/v1", `${name}.d.ts`);
  const apimachinery = /^io\.k8s\.apimachinery\.pkg\.(.+)\.[^.]+$/.exec(id);
  if (apimachinery) return join(NODE_MODULES, "@kubernetes-models/apimachinery", ...apimachinery[1]!.split("."), `${name}.d.ts`);
  throw new Error(`no typings known for schema ${id}`);
}

/** The inverse of typingsFile, from the module an import names. */
function schemaId(fromFile: string, specifier: string): string {
  const file = specifier.startsWith(".") ? resolve(dirname(fromFile), specifier) : join(NODE_MODULES, specifier);
  const parts = relative(NODE_MODULES, file).replace(/\.(d\.ts|js)$/, "").split("/");
  const name = parts.pop()!;
  if (parts.join("/") === "kubernetes-models/v1") return `io.k8s.api.core.v1.${name}`;
  if (parts[0] === "@kubernetes-models" && parts[1] === "apimachinery") return ["io.k8s.apimachinery.pkg", ...parts.slice(2), name].join(".");
  throw new Error(`${fromFile}: import "${specifier}" is outside core/v1 and apimachinery`);
}

/** The text of the JSDoc block right before `node`, as the API documents it (paragraphs kept). */
function description(node: ts.Node, source: ts.SourceFile): string | undefined {
  const ranges = ts.getLeadingCommentRanges(source.text, node.pos) ?? [];
  const last = ranges.at(-1);
  if (!last) return undefined;
  const block = source.text.slice(last.pos, last.end);
  if (!block.startsWith("/**")) return undefined;
  const lines = block
    .slice(3, -2)
    .split("\n")
    .map((line) => line.replace(/^\s*\* ?/, "").replace(/\\\*/g, "*").trimEnd());
  const text = lines.join("\n").trim();
  return text || undefined;
}

interface Typings {
  source: ts.SourceFile;
  file: string;
  /** Local name (`IIoK8sApiCoreV1Probe`) -> schema id, from the file's imports. */
  imports: Map<string, string>;
}

function readTypings(id: string): Typings {
  const file = typingsFile(id);
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const imports = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || !ts.isNamedImports(bindings)) continue;
    const specifier = statement.moduleSpecifier.text;
    if (specifier === "@kubernetes-models/base") continue;
    for (const element of bindings.elements) imports.set(element.name.text, schemaId(file, specifier));
  }
  return { source, file, imports };
}

function typeSchema(type: ts.TypeNode, typings: Typings, where: string, refs: Set<string>): Schema {
  switch (type.kind) {
    case ts.SyntaxKind.StringKeyword:
      return { type: "string" };
    // The core API has no floating-point fields: every number in it is an int32 or int64.
    case ts.SyntaxKind.NumberKeyword:
      return { type: "integer" };
    case ts.SyntaxKind.BooleanKeyword:
      return { type: "boolean" };
  }
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return { type: "string" };
  if (ts.isUnionTypeNode(type) && type.types.every((member) => ts.isLiteralTypeNode(member) && ts.isStringLiteral(member.literal))) {
    return { type: "string", enum: type.types.map((member) => ((member as ts.LiteralTypeNode).literal as ts.StringLiteral).text) };
  }
  if (ts.isArrayTypeNode(type)) return { type: "array", items: itemSchema(type.elementType, typings, where, refs) };
  if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
    const name = type.typeName.text;
    if (name === "Array" && type.typeArguments?.length === 1) return { type: "array", items: itemSchema(type.typeArguments[0]!, typings, where, refs) };
    const id = typings.imports.get(name);
    if (id) {
      refs.add(id);
      return { $ref: `#/components/schemas/${id}` };
    }
  }
  if (ts.isTypeLiteralNode(type) && type.members.length === 1) {
    const index = type.members[0]!;
    if (ts.isIndexSignatureDeclaration(index)) return { type: "object", additionalProperties: itemSchema(index.type, typings, where, refs) };
  }
  throw new Error(`${typings.file}: ${where}: unsupported type ${type.getText(typings.source)}`);
}

/** An array item or map value: a reference wrapped as the API server's document wraps it. */
function itemSchema(type: ts.TypeNode, typings: Typings, where: string, refs: Set<string>): Schema {
  const schema = typeSchema(type, typings, where, refs);
  return schema.$ref ? { allOf: [schema], default: {} } : schema;
}

function objectSchema(id: string, declaration: ts.InterfaceDeclaration, typings: Typings, refs: Set<string>): Schema {
  const typeMeta = declaration.heritageClauses?.some((clause) => clause.types.some((t) => t.expression.getText(typings.source) === "TypeMeta")) ?? false;
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const literals: Record<string, string> = {};
  for (const member of declaration.members) {
    if (!ts.isPropertySignature(member) || !member.type) continue;
    const name = ts.isStringLiteral(member.name) || ts.isIdentifier(member.name) ? member.name.text : member.name.getText(typings.source);
    const type = typeSchema(member.type, typings, name, refs);
    if (ts.isLiteralTypeNode(member.type) && ts.isStringLiteral(member.type.literal)) literals[name] = member.type.literal.text;
    // A property that is a reference takes its description beside an allOf, as OpenAPI 3.0 ignores siblings of $ref.
    const schema: Schema = type.$ref ? { allOf: [type] } : type;
    const text = description(member, typings.source) ?? (typeMeta ? OUR_DESCRIPTIONS[name] : undefined);
    if (text) schema.description = text;
    if (type.$ref) schema.default = {};
    const patch = PATCH_STRATEGIES[id]?.[name];
    if (patch?.mergeKey) schema["x-kubernetes-patch-merge-key"] = patch.mergeKey;
    if (patch) schema["x-kubernetes-patch-strategy"] = patch.strategy;
    properties[name] = schema;
    if (!member.questionToken && !(typeMeta && (name === "apiVersion" || name === "kind"))) required.push(name);
  }
  const schema: Schema = {};
  const text = description(declaration, typings.source);
  if (text) schema.description = text;
  schema.type = "object";
  if (Object.keys(properties).length > 0) schema.properties = properties;
  if (required.length > 0) schema.required = required;
  if (typeMeta && literals.apiVersion && literals.kind) {
    const [group, version] = literals.apiVersion.includes("/") ? literals.apiVersion.split("/") : ["", literals.apiVersion];
    schema["x-kubernetes-group-version-kind"] = [{ group, kind: literals.kind, version }];
  }
  return schema;
}

function schemaFor(id: string, refs: Set<string>): Schema {
  const typings = readTypings(id);
  const name = `I${id.slice(id.lastIndexOf(".") + 1)}`;
  for (const statement of typings.source.statements) {
    if (ts.isInterfaceDeclaration(statement) && statement.name.text === name) return objectSchema(id, statement, typings, refs);
    if (ts.isTypeAliasDeclaration(statement) && statement.name.text === name) {
      const scalar = SCALARS[id];
      if (!scalar) throw new Error(`${typings.file}: type ${name} is not a known scalar schema`);
      const text = description(statement, typings.source) ?? OUR_DESCRIPTIONS[id];
      return text ? { description: text, ...scalar } : { ...scalar };
    }
  }
  throw new Error(`${typings.file}: no declaration of ${name}`);
}

/** Every schema the roots reach, keyed by id, in sorted order so the output is stable. */
export function generateSchemas(roots: readonly string[] = ROOT_SCHEMAS): Record<string, Schema> {
  const schemas = new Map<string, Schema>();
  const pending = [...roots];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (schemas.has(id)) continue;
    const refs = new Set<string>();
    schemas.set(id, schemaFor(id, refs));
    pending.push(...refs);
  }
  return Object.fromEntries([...schemas].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function renderSchemas(schemas: Record<string, Schema>): string {
  return `${JSON.stringify(schemas)}\n`;
}

if (import.meta.main) {
  const rendered = renderSchemas(generateSchemas());
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
