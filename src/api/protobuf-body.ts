/**
 * Request bodies in the API server's protobuf encoding (`application/vnd.kubernetes.protobuf`),
 * which typed clients send from client-go 1.33 on: kubectl 1.33's `create namespace`, `auth can-i`
 * and `auth whoami` POST that way. A body is the `k8s\0` magic and a runtime.Unknown envelope
 * (typeMeta, raw), raw being the object's message (k8s.io/api's generated.proto). Only the kinds
 * the API accepts writes of this way are described, with the fields it reads.
 */
import { ProtoDecodeError, readMessage, type ProtoMessage } from "./protobuf.ts";
import { ApiError } from "./status.ts";

export const PROTOBUF_CONTENT_TYPE = "application/vnd.kubernetes.protobuf";
const MAGIC = [0x6b, 0x38, 0x73, 0x00];

const UNKNOWN: ProtoMessage = { 1: ["typeMeta", { 1: ["apiVersion", "string"], 2: ["kind", "string"] }], 2: ["raw", "bytes"], 3: ["contentEncoding", "string"], 4: ["contentType", "string"] };

/** ObjectMeta's fields a create reads (the server sets the others). */
const OBJECT_META: ProtoMessage = {
  1: ["name", "string"],
  2: ["generateName", "string"],
  3: ["namespace", "string"],
  5: ["uid", "string"],
  6: ["resourceVersion", "string"],
  11: ["labels", { map: "string" }],
  12: ["annotations", { map: "string" }],
  14: ["finalizers", { repeated: "string" }],
};

const SELECTOR_ATTRIBUTES: ProtoMessage = { 1: ["rawSelector", "string"] };
const RESOURCE_ATTRIBUTES: ProtoMessage = {
  1: ["namespace", "string"],
  2: ["verb", "string"],
  3: ["group", "string"],
  4: ["version", "string"],
  5: ["resource", "string"],
  6: ["subresource", "string"],
  7: ["name", "string"],
  8: ["fieldSelector", SELECTOR_ATTRIBUTES],
  9: ["labelSelector", SELECTOR_ATTRIBUTES],
};

const SELF_SUBJECT_REVIEW: ProtoMessage = { 1: ["metadata", OBJECT_META] };

/** The messages of the kinds accepted as protobuf, by `apiVersion/kind`. */
const MESSAGES: Record<string, ProtoMessage> = {
  "v1/Namespace": { 1: ["metadata", OBJECT_META], 2: ["spec", { 1: ["finalizers", { repeated: "string" }] }], 3: ["status", { 1: ["phase", "string"] }] },
  "authorization.k8s.io/v1/SelfSubjectAccessReview": {
    1: ["metadata", OBJECT_META],
    2: ["spec", { 1: ["resourceAttributes", RESOURCE_ATTRIBUTES], 2: ["nonResourceAttributes", { 1: ["path", "string"], 2: ["verb", "string"] }] }],
  },
  "authorization.k8s.io/v1/SelfSubjectRulesReview": { 1: ["metadata", OBJECT_META], 2: ["spec", { 1: ["namespace", "string"] }] },
  "authentication.k8s.io/v1/SelfSubjectReview": SELF_SUBJECT_REVIEW,
  "authentication.k8s.io/v1beta1/SelfSubjectReview": SELF_SUBJECT_REVIEW,
};

/** Whether a body of `expected` (`apiVersion/kind`) is accepted as protobuf. */
export function acceptsProtobuf(expected: string): boolean {
  return expected in MESSAGES;
}

/**
 * The object a protobuf body carries, as its JSON form (apiVersion and kind from the envelope; the
 * caller checks them against the URL's). A body that does not decode is the API server's 400.
 */
export function decodeProtobufBody(bytes: Uint8Array, expected: string): Record<string, unknown> {
  if (bytes.length < MAGIC.length || MAGIC.some((byte, i) => bytes[i] !== byte)) {
    throw ApiError.badRequest("provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]");
  }
  try {
    const envelope = readMessage(bytes.subarray(MAGIC.length), UNKNOWN) as { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string };
    if (envelope.contentEncoding) throw new ProtoDecodeError(`unsupported content encoding ${JSON.stringify(envelope.contentEncoding)}`);
    const apiVersion = envelope.typeMeta?.apiVersion || undefined;
    const kind = envelope.typeMeta?.kind || undefined;
    // Another kind is the caller's to refuse, in the API server's words: its fields are not read.
    const message = MESSAGES[`${apiVersion}/${kind}`] ?? MESSAGES[expected]!;
    const object = readMessage(envelope.raw ?? new Uint8Array(), message);
    return { ...(apiVersion && { apiVersion }), ...(kind && { kind }), ...object };
  } catch (error) {
    if (error instanceof ProtoDecodeError) throw ApiError.badRequest(`the request body cannot be decoded as protobuf: ${error.message}`);
    throw error;
  }
}
