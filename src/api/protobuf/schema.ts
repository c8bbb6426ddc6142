/**
 * The protobuf schema of the kinds a client may send us (schema/*.proto: our own subset of the
 * Kubernetes generated.proto files, with how Go prints each field to JSON), parsed once, on the
 * first protobuf body: an agent whose clients all send JSON never pays for it.
 */
import protobuf from "protobufjs";
import authentication from "./schema/authentication-v1.proto" with { type: "text" };
import authorization from "./schema/authorization-v1.proto" with { type: "text" };
import core from "./schema/core-v1.proto" with { type: "text" };
import intstr from "./schema/intstr.proto" with { type: "text" };
import meta from "./schema/meta-v1.proto" with { type: "text" };
import resource from "./schema/resource.proto" with { type: "text" };
import runtime from "./schema/runtime.proto" with { type: "text" };

export type MessageType = protobuf.Type;

/** The message of each kind by `apiVersion/kind`, as the API server's scheme registers it. */
const KINDS: Readonly<Record<string, string>> = {
  "v1/Pod": "k8s.io.api.core.v1.Pod",
  "v1/Namespace": "k8s.io.api.core.v1.Namespace",
  "v1/ConfigMap": "k8s.io.api.core.v1.ConfigMap",
  "v1/Secret": "k8s.io.api.core.v1.Secret",
  "v1/ServiceAccount": "k8s.io.api.core.v1.ServiceAccount",
  // DeleteOptions is registered in every group version; these are the two a DELETE names.
  "v1/DeleteOptions": "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
  "meta.k8s.io/v1/DeleteOptions": "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
  "authorization.k8s.io/v1/SelfSubjectAccessReview": "k8s.io.api.authorization.v1.SelfSubjectAccessReview",
  "authorization.k8s.io/v1/SelfSubjectRulesReview": "k8s.io.api.authorization.v1.SelfSubjectRulesReview",
  "authentication.k8s.io/v1/SelfSubjectReview": "k8s.io.api.authentication.v1.SelfSubjectReview",
  "authentication.k8s.io/v1/TokenRequest": "k8s.io.api.authentication.v1.TokenRequest",
  "authentication.k8s.io/v1/TokenReview": "k8s.io.api.authentication.v1.TokenReview",
};

let root: protobuf.Root | undefined;

function schemaRoot(): protobuf.Root {
  if (root) return root;
  const parsed = new protobuf.Root();
  // keepCase: the field names are the JSON names, and must stay as written.
  for (const text of [runtime, resource, intstr, meta, core, authorization, authentication]) protobuf.parse(text, parsed, { keepCase: true });
  parsed.resolveAll();
  root = parsed;
  return root;
}

/** The envelope message (runtime.Unknown) every body comes in. */
export function envelopeType(): MessageType {
  return schemaRoot().lookupType("k8s.io.apimachinery.pkg.runtime.Unknown");
}

/** The message `apiVersion` and `kind` name, or undefined for a kind this schema does not hold. */
export function objectType(apiVersion: string, kind: string): MessageType | undefined {
  const name = KINDS[`${apiVersion}/${kind}`];
  return name === undefined ? undefined : schemaRoot().lookupType(name);
}

/** Every `apiVersion/kind` objectType knows. */
export const PROTOBUF_KINDS: readonly string[] = Object.keys(KINDS);
