/**
 * grpc probes, like the kubelet's pkg/probe/grpc: a grpc.health.v1.Health/Check call to the pod IP
 * over plaintext HTTP/2, the probe's `service` in the request. SERVING is success; any other status,
 * an error status or a call not finished within the timeout is a failure (never an errored probe:
 * the kubelet's gRPC prober returns no error, to behave like grpc_health_probe). Messages use the
 * kubelet's wording.
 */
import * as grpc from "@grpc/grpc-js";
import type { Clock } from "../clock.ts";
import type { GrpcAction } from "../manifest/types.ts";
import { goDuration } from "../printers/go-duration.ts";
import { KUBE_MINOR_VERSION } from "../version.ts";
import {
  decodeHealthCheckResponse,
  encodeHealthCheckRequest,
  HEALTH_CHECK_METHOD,
  servingStatusName,
  SERVING_STATUS,
  type HealthCheckRequest,
  type HealthCheckResponse,
} from "./grpc-health.ts";
import { goQuote, joinHostPort, type ProbeResult } from "./probe-result.ts";

/** Go's codes.Code String() names, indexed by the status number. */
const GO_CODE_NAMES = [
  "OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists", "PermissionDenied",
  "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable",
  "DataLoss", "Unauthenticated",
];

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  // grpc-js appends its own `grpc-node-js/x.y`, as grpc-go appends `grpc-go/x.y` to the kubelet's.
  "grpc.primary_user_agent": `kube-probe/${KUBE_MINOR_VERSION}`,
  // A connection of its own per probe, closed with it, as the kubelet dials anew each time; a
  // shared subchannel would let one probe's connection answer for the next.
  "grpc.use_local_subchannel_pool": 1,
  // The kubelet dials the pod directly: an HTTP(S)_PROXY in the agent's environment is not for probes.
  "grpc.enable_http_proxy": 0,
};

/**
 * Runs one grpc probe against `podIP`. Never rejects. Connecting and the call share one deadline,
 * `timeoutMs` armed on `clock` (so a FakeClock expires it); when it passes, the call is cancelled
 * and the connection closed. Until the channel is ready the probe keeps trying to connect, as the
 * kubelet's blocking dial does, so a refused port fails at the deadline, not at once.
 */
export function grpcProbe(clock: Clock, action: GrpcAction, podIP: string, timeoutMs: number): Promise<ProbeResult> {
  const address = joinHostPort(podIP, action.port);
  const within = goDuration(timeoutMs);
  return new Promise((resolve) => {
    let client: grpc.Client;
    try {
      client = new grpc.Client(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    } catch (error) {
      return resolve({ ok: false, message: `error: failed to connect service at ${goQuote(address)}: ${errorText(error)}` });
    }
    let settled = false;
    let call: grpc.ClientUnaryCall | undefined;
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      call?.cancel();
      client.close();
      resolve(result);
    };
    const cancelTimer = clock.setTimeout(
      () =>
        finish({
          ok: false,
          message:
            call === undefined
              ? `timeout: failed to connect service ${goQuote(address)} within ${within}: context deadline exceeded`
              : `timeout: health rpc did not complete within ${within}`,
        }),
      timeoutMs,
    );
    // The deadline is the clock's timer above; grpc-js's own would read the wall clock.
    client.waitForReady(Infinity, (error) => {
      if (settled) return;
      if (error) return finish({ ok: false, message: `error: failed to connect service at ${goQuote(address)}: ${errorText(error)}` });
      const request: HealthCheckRequest = { service: action.service };
      call = client.makeUnaryRequest<HealthCheckRequest, HealthCheckResponse>(
        HEALTH_CHECK_METHOD,
        encodeHealthCheckRequest,
        decodeHealthCheckResponse,
        request,
        new grpc.Metadata(),
        {},
        (callError, response) => finish(callError ? failedCall(callError, within) : judge(response)),
      );
    });
  });
}

function judge(response: HealthCheckResponse | undefined): ProbeResult {
  const status = response?.status ?? SERVING_STATUS.UNKNOWN;
  if (status === SERVING_STATUS.SERVING) return { ok: true, message: "service healthy" };
  return { ok: false, message: `service unhealthy (responded with ${goQuote(servingStatusName(status))})` };
}

function failedCall(error: grpc.ServiceError, within: string): ProbeResult {
  switch (error.code) {
    case grpc.status.UNIMPLEMENTED:
      return { ok: false, message: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${error.details}` };
    case grpc.status.DEADLINE_EXCEEDED:
      return { ok: false, message: `timeout: health rpc did not complete within ${within}` };
    default: {
      // Go's status error prints as `rpc error: code = NotFound desc = unknown service`.
      const code = GO_CODE_NAMES[error.code] ?? `Code(${error.code})`;
      return { ok: false, message: `error: health rpc probe failed: rpc error: code = ${code} desc = ${error.details}` };
    }
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
