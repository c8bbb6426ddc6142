/**
 * The OpenAPI v3 document of what this server knows of core/v1: Pod, Node, Event, ConfigMap, Secret and ServiceAccount with every schema
 * they reference (generated into openapi-schemas.json by scripts/openapi-schemas.ts), and the paths
 * that tie each resource to its kind. kubectl needs both: `explain` finds a resource's schema through
 * the `x-kubernetes-group-version-kind` of one of its path operations, and `apply` only sends its
 * write once the PATCH operation lists the `fieldValidation` query parameter. The document describes
 * the API as kubectl expects it; which operations are answered (writes are refused) is the routes' business.
 */
import schemas from "./openapi-schemas.json";

type Schema = Record<string, unknown>;
type Operation = Record<string, unknown>;

/** The group/version this document describes, as `/openapi/v3` names it. */
export const CORE_GROUP_VERSION = "api/v1";

interface Resource {
  kind: "Pod" | "Node" | "Event" | "ConfigMap" | "Secret" | "ServiceAccount";
  /** Lower-case plural, as in the URL. */
  plural: string;
  namespaced: boolean;
}

export const OPENAPI_RESOURCES: readonly Resource[] = [
  { kind: "Pod", plural: "pods", namespaced: true },
  { kind: "Node", plural: "nodes", namespaced: false },
  { kind: "Event", plural: "events", namespaced: true },
  { kind: "ConfigMap", plural: "configmaps", namespaced: true },
  { kind: "Secret", plural: "secrets", namespaced: true },
  { kind: "ServiceAccount", plural: "serviceaccounts", namespaced: true },
];

const SCHEMA_PREFIX = "#/components/schemas/io.k8s.api.core.v1.";
const META_PREFIX = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.";

function queryParameter(name: string, description: string, type = "string"): Schema {
  return { name, in: "query", description, schema: { type, uniqueItems: true } };
}

function pathParameter(name: string, description: string): Schema {
  return { name, in: "path", description, required: true, schema: { type: "string", uniqueItems: true } };
}

const PRETTY = queryParameter("pretty", "If 'true', then the output is pretty printed.");
const DRY_RUN = queryParameter("dryRun", "When present, indicates that modifications should not be persisted. The only valid value is All.");
const FIELD_MANAGER = queryParameter("fieldManager", "A name associated with the actor or entity that is making these changes.");
/** kubectl apply and create look for this parameter on PATCH before they send a write (see the module comment). */
const FIELD_VALIDATION = queryParameter(
  "fieldValidation",
  "How the server treats unknown or duplicate fields in the request body: Ignore, Warn (the default) or Strict.",
);
const FORCE = queryParameter("force", "Force an apply request through, taking fields other managers own. Only valid for apply patches.", "boolean");
const LIST_PARAMETERS = [
  queryParameter("labelSelector", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
  queryParameter("fieldSelector", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
  queryParameter("limit", "The maximum number of objects to return in one list response; the list's metadata.continue then fetches the next page.", "integer"),
  queryParameter("continue", "The continue token from the previous page of a paginated list."),
  queryParameter("resourceVersion", "Which version of the collection a list or watch starts from."),
  queryParameter("resourceVersionMatch", "How resourceVersion applies to a list: Exact or NotOlderThan."),
  queryParameter("timeoutSeconds", "How long a list or watch call may last, whatever the activity.", "integer"),
  queryParameter("watch", "Watch for changes to the described resources and return them as a stream of add, update and remove notifications.", "boolean"),
  queryParameter("allowWatchBookmarks", "Ask a watch for BOOKMARK events, which carry only a resourceVersion.", "boolean"),
];

const JSON_TYPES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"];
const PATCH_TYPES = ["application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json"];

function content(types: readonly string[], ref: string): Schema {
  return Object.fromEntries(types.map((type) => [type, { schema: { $ref: ref } }]));
}

function operation(
  resource: Resource,
  action: string,
  operationId: string,
  description: string,
  answer: string,
  options: { parameters?: Schema[]; requestBody?: Schema; created?: boolean } = {},
): Operation {
  const responses: Schema = { "200": { description: "OK", content: content(JSON_TYPES, answer) } };
  if (options.created) responses["201"] = { description: "Created", content: content(JSON_TYPES, answer) };
  responses["401"] = { description: "Unauthorized" };
  return {
    tags: ["core_v1"],
    description,
    operationId,
    ...(options.parameters ? { parameters: options.parameters } : {}),
    ...(options.requestBody ? { requestBody: options.requestBody } : {}),
    responses,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": { group: "", version: "v1", kind: resource.kind },
  };
}

/** The collection and object paths of one resource, with the operations the API server documents for them. */
function resourcePaths(resource: Resource): Record<string, Schema> {
  const { kind, plural, namespaced } = resource;
  const scope = namespaced ? "Namespaced" : "";
  const base = namespaced ? `/api/v1/namespaces/{namespace}/${plural}` : `/api/v1/${plural}`;
  const scopeParameters = namespaced ? [pathParameter("namespace", "object name and auth scope, such as for teams and projects")] : [];
  const object = `${SCHEMA_PREFIX}${kind}`;
  const list = `${SCHEMA_PREFIX}${kind}List`;
  const body = (types: readonly string[], ref: string) => ({ required: true, content: content(types, ref) });
  const paths: Record<string, Schema> = {
    [base]: {
      get: operation(resource, "list", `listCoreV1${scope}${kind}`, `list or watch objects of kind ${kind}`, list, { parameters: LIST_PARAMETERS }),
      post: operation(resource, "post", `createCoreV1${scope}${kind}`, `create a ${kind}`, object, {
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        requestBody: body(["*/*"], object),
        created: true,
      }),
      delete: operation(resource, "deletecollection", `deleteCoreV1Collection${scope}${kind}`, `delete collection of ${kind}`, `${META_PREFIX}Status`, {
        parameters: [DRY_RUN, ...LIST_PARAMETERS],
      }),
      parameters: [...scopeParameters, PRETTY],
    },
    [`${base}/{name}`]: {
      get: operation(resource, "get", `readCoreV1${scope}${kind}`, `read the specified ${kind}`, object),
      put: operation(resource, "put", `replaceCoreV1${scope}${kind}`, `replace the specified ${kind}`, object, {
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION],
        requestBody: body(["*/*"], object),
        created: true,
      }),
      patch: operation(resource, "patch", `patchCoreV1${scope}${kind}`, `partially update the specified ${kind}`, object, {
        parameters: [DRY_RUN, FIELD_MANAGER, FIELD_VALIDATION, FORCE],
        requestBody: body(PATCH_TYPES, `${META_PREFIX}Patch`),
        created: true,
      }),
      delete: operation(resource, "delete", `deleteCoreV1${scope}${kind}`, `delete a ${kind}`, object, {
        parameters: [DRY_RUN, queryParameter("gracePeriodSeconds", "The duration in seconds before the object should be deleted.", "integer")],
      }),
      parameters: [pathParameter("name", `name of the ${kind}`), ...scopeParameters, PRETTY],
    },
  };
  if (namespaced) {
    paths[`/api/v1/${plural}`] = {
      get: operation(resource, "list", `listCoreV1${kind}ForAllNamespaces`, `list or watch objects of kind ${kind}`, list),
      parameters: [...LIST_PARAMETERS, PRETTY],
    };
  }
  return paths;
}

export function buildOpenApiDocument(): Schema {
  const paths = Object.assign({}, ...OPENAPI_RESOURCES.map(resourcePaths)) as Record<string, Schema>;
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1" },
    paths,
    components: { schemas },
  };
}
