/**
 * Every Status carries the details the API server fills (k8s.io/apimachinery/pkg/api/errors):
 * NotFound, AlreadyExists, Conflict and Forbidden name the object and its resource (details.kind is
 * the resource, `pods`, not the kind), Invalid names the kind and one cause per field,
 * MethodNotAllowed the resource, InternalError its one cause; BadRequest and Expired have none.
 */
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/api/http/status.ts";
import { logRoutes } from "../../src/api/resources/pods/logs-api.ts";
import { podRoutes } from "../../src/api/resources/pods/pods-api.ts";
import { eventRoutes } from "../../src/api/resources/events-api.ts";
import { nodeRoutes } from "../../src/api/resources/nodes-api.ts";
import { apiContext, call } from "../api-objects-fixtures.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const failure = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure" } as const;

describe("the API server's constructors", () => {
  test("NewNotFound: details name the object and its resource, a group only when it has one", () => {
    expect(ApiError.notFound("pods", "web").toStatus()).toEqual({ ...failure, message: 'pods "web" not found', reason: "NotFound", details: { name: "web", kind: "pods" }, code: 404 });
    expect(ApiError.notFound("leases", "n1", "coordination.k8s.io").toStatus()).toEqual({
      ...failure,
      message: 'leases.coordination.k8s.io "n1" not found',
      reason: "NotFound",
      details: { name: "n1", group: "coordination.k8s.io", kind: "leases" },
      code: 404,
    });
  });

  test("NewAlreadyExists, NewConflict and NewForbidden: the object, the resource, and the API server's sentence", () => {
    expect(ApiError.alreadyExists("namespaces", "demo").toStatus()).toEqual({ ...failure, message: 'namespaces "demo" already exists', reason: "AlreadyExists", details: { name: "demo", kind: "namespaces" }, code: 409 });
    expect(ApiError.conflict("pods", "web", "the object has been modified; please apply your changes to the latest version and try again").toStatus()).toEqual({
      ...failure,
      message: 'Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again',
      reason: "Conflict",
      details: { name: "web", kind: "pods" },
      code: 409,
    });
    expect(ApiError.forbidden("namespaces", "default", "this namespace may not be deleted").toStatus()).toEqual({
      ...failure,
      message: 'namespaces "default" is forbidden: this namespace may not be deleted',
      reason: "Forbidden",
      details: { name: "default", kind: "namespaces" },
      code: 403,
    });
    // A forbidden create of a generateName'd object has no name yet.
    expect(ApiError.forbidden("pods", "", "no").message).toBe("pods is forbidden: no");
  });

  test("NewInvalid: the kind (with its group), the name, each cause rendered into the message", () => {
    const one = ApiError.invalid("Namespace", "Bad", [{ reason: "FieldValueInvalid", message: 'Invalid value: "Bad": must be lower case', field: "metadata.name" }]);
    expect(one.toStatus()).toEqual({
      ...failure,
      message: 'Namespace "Bad" is invalid: metadata.name: Invalid value: "Bad": must be lower case',
      reason: "Invalid",
      details: { name: "Bad", kind: "Namespace", causes: [{ reason: "FieldValueInvalid", message: 'Invalid value: "Bad": must be lower case', field: "metadata.name" }] },
      code: 422,
    });
    const two = ApiError.invalid("SelfSubjectAccessReview", "", [
      { reason: "FieldValueRequired", message: "Required value", field: "spec.a" },
      { reason: "FieldValueInvalid", message: "Invalid value: 1: no", field: "spec.b" },
    ], "authorization.k8s.io");
    expect(two.message).toBe('SelfSubjectAccessReview.authorization.k8s.io "" is invalid: [spec.a: Required value, spec.b: Invalid value: 1: no]');
    expect(two.details).toMatchObject({ group: "authorization.k8s.io", kind: "SelfSubjectAccessReview" });
    expect(two.details!.name).toBeUndefined();
  });

  test("NewMethodNotSupported: the action and the resource; no name", () => {
    expect(ApiError.methodNotSupported("services", "create").toStatus()).toEqual({
      ...failure,
      message: 'create is not supported on resources of kind "services"',
      reason: "MethodNotAllowed",
      details: { kind: "services" },
      code: 405,
    });
  });

  test("NewInternalError carries its error as the one cause; NewBadRequest carries no details", () => {
    expect(ApiError.internal("disk I/O error").toStatus()).toEqual({ ...failure, message: "Internal error occurred: disk I/O error", reason: "InternalError", details: { causes: [{ message: "disk I/O error" }] }, code: 500 });
    expect(ApiError.badRequest("no").toStatus()).toEqual({ ...failure, message: "no", reason: "BadRequest", code: 400 });
  });
});

describe("the routes' NotFound", () => {
  test("pods, pods/log, events and nodes name the object and the resource", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    using api = apiContext(h.dbPath, h.clock);
    const cases: [typeof podRoutes, string, string, string][] = [
      [podRoutes, "/api/v1/namespaces/demo/pods/nope", "pods", "nope"],
      [logRoutes, "/api/v1/namespaces/demo/pods/nope/log", "pods", "nope"],
      [eventRoutes, "/api/v1/namespaces/demo/events/nope.1", "events", "nope.1"],
      [nodeRoutes, "/api/v1/nodes/elsewhere", "nodes", "elsewhere"],
    ];
    for (const [routes, path, resource, name] of cases) {
      const answer = await call(routes, "GET", path, api);
      expect({ path, status: answer.status, details: answer.body.details }).toEqual({ path, status: 404, details: { name, kind: resource } });
    }
    h.agent.close();
  });
});
