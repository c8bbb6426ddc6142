/**
 * The Kubernetes protobuf envelope (apimachinery's serializer/protobuf/protobuf.go): the four bytes
 * "k8s\0", then a runtime.Unknown whose typeMeta names the object's apiVersion and kind and whose
 * raw bytes are the object. Failures read as the API server's decoder words them.
 */
import { envelopeType } from "./schema.ts";

const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
}

/** Why a body is not a protobuf object; `kind` and `apiVersion` once the envelope named them. */
export class ProtobufDecodeError extends Error {
  override readonly name = "ProtobufDecodeError";
  constructor(
    message: string,
    readonly named?: { apiVersion: string; kind: string },
  ) {
    super(message);
  }
}

export function readEnvelope(bytes: Uint8Array): Envelope {
  if (bytes.length === 0) throw new ProtobufDecodeError("empty data");
  if (bytes.length < MAGIC.length || MAGIC.some((byte, i) => bytes[i] !== byte)) {
    throw new ProtobufDecodeError(`provided data does not appear to be a protobuf message, expected prefix [${MAGIC.join(" ")}]`);
  }
  if (bytes.length === MAGIC.length) throw new ProtobufDecodeError("empty body");
  const unknown = decodeMessage(() => envelopeType().decode(bytes.subarray(MAGIC.length))) as {
    typeMeta?: { apiVersion?: string; kind?: string };
    raw?: Uint8Array;
  };
  return { apiVersion: unknown.typeMeta?.apiVersion ?? "", kind: unknown.typeMeta?.kind ?? "", raw: unknown.raw ?? new Uint8Array() };
}

/**
 * Runs a protobufjs decode, its failure said as Go's generated unmarshalers say it: a message cut
 * short is `unexpected EOF`, a tag with no wire type is `proto: illegal wireType N`.
 */
export function decodeMessage<T>(decode: () => T, named?: { apiVersion: string; kind: string }): T {
  try {
    return decode();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const wireType = /invalid wire type (\d+)/.exec(message);
    if (error instanceof RangeError && /index out of range/.test(message)) throw new ProtobufDecodeError("unexpected EOF", named);
    if (wireType) throw new ProtobufDecodeError(`proto: illegal wireType ${wireType[1]}`, named);
    throw new ProtobufDecodeError(`proto: ${message}`, named);
  }
}
