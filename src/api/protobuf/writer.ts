/**
 * A protobuf writer for the one document the API serves as protobuf (openapi-v2.ts), described by
 * its field numbers, over protobufjs's wire writer. Request bodies are read through protobufjs and
 * our schema (decode-object.ts).
 */
import protobuf from "protobufjs";

const LENGTH_DELIMITED = 2;
const VARINT = 0;

/** A protobuf message being written: fields appended in order, each tagged with its number. */
export class ProtoWriter {
  private readonly wire = protobuf.Writer.create();

  bytes(field: number, data: Uint8Array): this {
    this.wire.uint32((field << 3) | LENGTH_DELIMITED).bytes(data);
    return this;
  }

  /** A varint field (an int or a bool as 0/1). */
  number(field: number, value: number | boolean | undefined): this {
    if (value === undefined) return this;
    this.wire.uint32((field << 3) | VARINT).uint64(Number(value));
    return this;
  }

  string(field: number, value: string | undefined): this {
    if (value !== undefined) this.wire.uint32((field << 3) | LENGTH_DELIMITED).string(value);
    return this;
  }

  message(field: number, build: (writer: ProtoWriter) => void): this {
    const writer = new ProtoWriter();
    build(writer);
    return this.bytes(field, writer.finish());
  }

  finish(): Uint8Array {
    return this.wire.finish();
  }
}
