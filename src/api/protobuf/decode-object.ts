/**
 * A protobuf request body (`application/vnd.kubernetes.protobuf`) as the JSON object the same
 * write would have sent: `kind` and `apiVersion` from the envelope, the rest as Go prints it.
 * Unknown field numbers are dropped, as the API server's generated unmarshalers skip them (its
 * codec factory has no strict protobuf decoding, so not even fieldValidation=Strict reports them).
 */
import { decodeMessage, ProtobufDecodeError, readEnvelope } from "./envelope.ts";
import { objectType } from "./schema.ts";
import { messageToJson, type JsonObject } from "./to-json.ts";

/** Throws ProtobufDecodeError, in the API server's words, for a body that is not one of our kinds. */
export function decodeProtobufObject(bytes: Uint8Array): JsonObject {
  const { apiVersion, kind, raw } = readEnvelope(bytes);
  const named = { apiVersion, kind };
  if (kind === "") throw new ProtobufDecodeError(`Object 'Kind' is missing in '${typeMetaText(named)}'`, named);
  if (apiVersion === "") throw new ProtobufDecodeError(`Object 'apiVersion' is missing in '${typeMetaText(named)}'`, named);
  const type = objectType(apiVersion, kind);
  if (!type) throw new ProtobufDecodeError(`no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`, named);
  const message = decodeMessage(() => type.decode(raw), named) as unknown as Record<string, unknown>;
  return { kind, apiVersion, ...decodeMessage(() => messageToJson(type, message), named) };
}

/** Go's %#v of the envelope's TypeMeta, which the API server quotes when a kind or version is missing. */
function typeMetaText({ apiVersion, kind }: { apiVersion: string; kind: string }): string {
  return `runtime.TypeMeta{APIVersion:${JSON.stringify(apiVersion)}, Kind:${JSON.stringify(kind)}}`;
}
