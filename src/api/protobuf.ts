/**
 * The protobuf wire format, as far as the API needs it: a writer for the documents it serves as
 * protobuf (openapi-v2.ts) and a reader for the request bodies typed clients send that way
 * (protobuf-body.ts). Messages are described by their field numbers; fields nobody asked for are
 * skipped, as protobuf readers do.
 */

/** A protobuf message being written: fields appended in order, each tagged with its number. */
export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private static readonly encoder = new TextEncoder();

  /** Writes `value` as a varint (non-negative, up to 2^53). */
  private varint(value: number): void {
    const bytes: number[] = [];
    while (value > 0x7f) {
      bytes.push((value % 0x80) | 0x80);
      value = Math.floor(value / 0x80);
    }
    bytes.push(value);
    this.chunks.push(Uint8Array.from(bytes));
  }

  bytes(field: number, data: Uint8Array): this {
    this.varint((field << 3) | 2);
    this.varint(data.length);
    this.chunks.push(data);
    return this;
  }

  /** A varint field (an int or a bool as 0/1). */
  number(field: number, value: number | boolean | undefined): this {
    if (value === undefined) return this;
    this.varint(field << 3);
    this.varint(Number(value));
    return this;
  }

  string(field: number, value: string | undefined): this {
    return value === undefined ? this : this.bytes(field, ProtoWriter.encoder.encode(value));
  }

  message(field: number, build: (writer: ProtoWriter) => void): this {
    const writer = new ProtoWriter();
    build(writer);
    return this.bytes(field, writer.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.chunks.reduce((size, chunk) => size + chunk.length, 0));
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}

/** A field type a message description names. */
export type ProtoType = "string" | "bytes" | "bool" | "int" | ProtoMessage | { repeated: ProtoType } | { map: ProtoType };

/** A message's fields by number: each field's JSON name and type. */
export interface ProtoMessage {
  [field: number]: [name: string, type: ProtoType];
}

/** A body that is not the protobuf it claims to be. */
export class ProtoDecodeError extends Error {
  override readonly name = "ProtoDecodeError";
}

const WIRE_VARINT = 0;
const WIRE_64 = 1;
const WIRE_LENGTH = 2;
const WIRE_32 = 5;

/** A message's fields, decoded as `message` describes them into the object its JSON form is. */
export function readMessage(bytes: Uint8Array, message: ProtoMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields(bytes)) {
    const described = message[field.number];
    if (!described) continue;
    const [name, type] = described;
    if (typeof type === "object" && "repeated" in type) {
      ((out[name] ??= []) as unknown[]).push(value(field, type.repeated));
    } else if (typeof type === "object" && "map" in type) {
      // A map entry is a message of key (1) and value (2).
      const entry = readMessage(lengthOf(field), { 1: ["key", "string"], 2: ["value", type.map] });
      ((out[name] ??= {}) as Record<string, unknown>)[String(entry.key ?? "")] = entry.value ?? (type.map === "string" ? "" : undefined);
    } else {
      out[name] = value(field, type);
    }
  }
  return out;
}

interface Field {
  number: number;
  wire: number;
  varint: bigint;
  data: Uint8Array;
}

function value(field: Field, type: ProtoType): unknown {
  if (type === "string") return new TextDecoder("utf-8", { fatal: false }).decode(lengthOf(field));
  if (type === "bytes") return lengthOf(field);
  if (type === "bool") return varintOf(field) !== 0n;
  if (type === "int") return Number(BigInt.asIntN(64, varintOf(field)));
  return readMessage(lengthOf(field), type as ProtoMessage);
}

function lengthOf(field: Field): Uint8Array {
  if (field.wire !== WIRE_LENGTH) throw new ProtoDecodeError(`field ${field.number}: expected a length-delimited value, found wire type ${field.wire}`);
  return field.data;
}

function varintOf(field: Field): bigint {
  if (field.wire !== WIRE_VARINT) throw new ProtoDecodeError(`field ${field.number}: expected a varint, found wire type ${field.wire}`);
  return field.varint;
}

function* fields(bytes: Uint8Array): Generator<Field> {
  let offset = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (offset >= bytes.length) throw new ProtoDecodeError("unexpected end of data in a varint");
      if (shift > 63n) throw new ProtoDecodeError("a varint longer than 64 bits");
      const byte = bytes[offset++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
  };
  const take = (length: number): Uint8Array => {
    if (offset + length > bytes.length) throw new ProtoDecodeError("unexpected end of data in a field");
    const data = bytes.subarray(offset, offset + length);
    offset += length;
    return data;
  };
  while (offset < bytes.length) {
    const key = varint();
    const number = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === WIRE_VARINT) yield { number, wire, varint: varint(), data: new Uint8Array() };
    else if (wire === WIRE_LENGTH) yield { number, wire, varint: 0n, data: take(Number(varint())) };
    else if (wire === WIRE_64) yield { number, wire, varint: 0n, data: take(8) };
    else if (wire === WIRE_32) yield { number, wire, varint: 0n, data: take(4) };
    else throw new ProtoDecodeError(`field ${number}: unsupported wire type ${wire}`);
  }
}
