/**
 * The grpc.health.v1 messages (health.proto), parsed once on the first grpc probe, and their
 * encoders in the shape a gRPC call takes. The server side uses the same pairs, so a test can serve
 * the protocol with the very definitions the probe speaks.
 */
import protobuf from "protobufjs";
import healthProto from "./health.proto" with { type: "text" };

export const HEALTH_CHECK_METHOD = "/grpc.health.v1.Health/Check";

export interface HealthCheckRequest {
  service: string;
}

export interface HealthCheckResponse {
  /** A ServingStatus number: a server may send one this definition does not name. */
  status: number;
}

export const SERVING_STATUS = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

interface HealthTypes {
  request: protobuf.Type;
  response: protobuf.Type;
  servingStatus: protobuf.Enum;
}

let types: HealthTypes | undefined;

function healthTypes(): HealthTypes {
  if (types) return types;
  const { root } = protobuf.parse(healthProto, { keepCase: true });
  types = {
    request: root.lookupType("grpc.health.v1.HealthCheckRequest"),
    response: root.lookupType("grpc.health.v1.HealthCheckResponse"),
    servingStatus: root.lookupEnum("grpc.health.v1.HealthCheckResponse.ServingStatus"),
  };
  return types;
}

export function encodeHealthCheckRequest(request: HealthCheckRequest): Buffer {
  return Buffer.from(healthTypes().request.encode(request).finish());
}

export function decodeHealthCheckRequest(bytes: Buffer): HealthCheckRequest {
  const message = healthTypes().request.decode(bytes) as unknown as Partial<HealthCheckRequest>;
  return { service: message.service ?? "" };
}

export function encodeHealthCheckResponse(response: HealthCheckResponse): Buffer {
  return Buffer.from(healthTypes().response.encode(response).finish());
}

export function decodeHealthCheckResponse(bytes: Buffer): HealthCheckResponse {
  const message = healthTypes().response.decode(bytes) as unknown as Partial<HealthCheckResponse>;
  return { status: message.status ?? SERVING_STATUS.UNKNOWN };
}

/** The status as Go's generated String() prints it: its name, or the bare number for one it does not know. */
export function servingStatusName(status: number): string {
  return healthTypes().servingStatus.valuesById[status] ?? String(status);
}
