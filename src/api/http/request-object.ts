/**
 * A write's body as the object it carries, decoded by its Content-Type as the API server's
 * NegotiateInputSerializer picks a decoder: JSON (also when no Content-Type is given), YAML, or
 * the Kubernetes protobuf encoding that client-go 1.32 and later send for typed writes (kubectl
 * debug, create namespace, auth can-i). A protobuf body comes back as the JSON object the same
 * write would have sent, so everything after this reads one shape.
 */
import { ManifestError } from "../../manifest/errors.ts";
import { parseManifest } from "../../manifest/parse.ts";
import { jsonDepthError } from "./json-depth.ts";
import { decodeProtobufObject } from "../protobuf/decode-object.ts";
import { ProtobufDecodeError } from "../protobuf/envelope.ts";
import { ApiError } from "./status.ts";

const JSON_TYPE = "application/json";
const YAML_TYPE = "application/yaml";
export const PROTOBUF_TYPE = "application/vnd.kubernetes.protobuf";
/** In the API server's order, which its 415 lists. */
export const ACCEPTED_BODY_TYPES = [JSON_TYPE, YAML_TYPE, PROTOBUF_TYPE] as const;

/**
 * The object in `bytes`; `into` is the kind the route decodes (`Pod`), which only the messages name.
 * @throws ApiError 415 for a Content-Type we do not decode, 400 for a body that does not decode,
 *   each in the API server's words (handlers/rest.go transformDecodeError).
 */
export function decodeRequestObject(bytes: Uint8Array, contentType: string | null, into: string): unknown {
  const mediaType = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase() || JSON_TYPE;
  switch (mediaType) {
    case JSON_TYPE: {
      const text = new TextDecoder().decode(bytes);
      // The serializer reads apiVersion and kind first (SimpleMetaFactory.Interpret): its error is the one answered.
      const tooDeep = jsonDepthError(text);
      if (tooDeep) throw unrecognized(into, `couldn't get version/kind; json parse error: ${tooDeep}`, bytes);
      try {
        return JSON.parse(text);
      } catch (error) {
        throw unrecognized(into, (error as Error).message, bytes);
      }
    }
    case YAML_TYPE:
      try {
        return parseManifest(new TextDecoder().decode(bytes), "the request body", "yaml");
      } catch (error) {
        if (error instanceof ManifestError) throw unrecognized(into, error.issues.map((issue) => issue.message).join("; "), bytes);
        // The YAML parser recurses: a body nested past what our stack holds is refused as go-yaml refuses one past its bound.
        if (error instanceof RangeError) throw unrecognized(into, "error converting YAML to JSON: yaml: exceeded max depth of 10000", bytes);
        throw error;
      }
    case PROTOBUF_TYPE:
      try {
        return decodeProtobufObject(bytes);
      } catch (error) {
        if (!(error instanceof ProtobufDecodeError)) throw error;
        if (!error.named?.kind) throw unrecognized(into, error.message, bytes);
        const version = error.named.apiVersion.split("/").pop();
        throw ApiError.badRequest(`${error.named.kind} in version ${JSON.stringify(version)} cannot be handled as a ${into}: ${error.message}`);
      }
    default:
      throw new ApiError(415, "UnsupportedMediaType", `the body of the request was in an unknown format - accepted media types include: ${ACCEPTED_BODY_TYPES.join(", ")}`);
  }
}

function unrecognized(into: string, reason: string, bytes: Uint8Array): ApiError {
  return ApiError.badRequest(`the object provided is unrecognized (must be of type ${into}): ${reason} (${summarize(bytes)})`);
}

/** The API server's summarizeData: a body's first 30 bytes, as text for JSON, else in hex. */
function summarize(bytes: Uint8Array): string {
  if (bytes.length === 0) return "<empty>";
  const head = bytes.subarray(0, 30);
  const more = bytes.length > 30 ? " ..." : "";
  return bytes[0] === 0x7b ? `${new TextDecoder().decode(head)}${more}` : `${Buffer.from(head).toString("hex")}${more}`;
}
