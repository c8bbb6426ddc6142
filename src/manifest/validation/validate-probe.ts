/**
 * Probes and lifecycle hooks: the handler (exactly one), its target port (a named port is resolved
 * against the container's ports here, so a typo is refused at load time rather than failing every
 * probe at run time), and the timing fields with the API server's defaults.
 */
import type {
  ContainerPort,
  ExecAction,
  GrpcAction,
  HttpGetAction,
  HttpHeader,
  LifecycleHandler,
  Probe,
  ProbeHandler,
  ProbeKind,
  SleepAction,
  TcpSocketAction,
} from "../types.ts";
import type { FieldPath } from "../errors.ts";
import { describeValue, type Fields } from "../fields.ts";
import { checkHttpHeaderName, checkPortName } from "../names.ts";
import { formatPath } from "../errors.ts";

/** The container's declared ports, for resolving `port: http`. */
export interface PortScope {
  ports: readonly ContainerPort[];
  /** Where the ports are declared, for the message when a name is not found. */
  path: FieldPath;
}

/** API server defaults (pkg/apis/core/v1/defaults.go, SetDefaults_Probe). */
export const PROBE_DEFAULTS = {
  initialDelaySeconds: 0,
  timeoutSeconds: 1,
  periodSeconds: 10,
  successThreshold: 1,
  failureThreshold: 3,
} as const;

const PROBE_HANDLERS = ["exec", "httpGet", "tcpSocket", "grpc"] as const;
const LIFECYCLE_HANDLERS = ["exec", "httpGet", "sleep"] as const;
/** Valid in the API but not something minikubelet can run: refused by name rather than ignored. */
const UNSUPPORTED_HANDLERS: Record<string, string> = {
  tcpSocket: "tcpSocket is deprecated as a lifecycle handler and never runs; use exec, httpGet or sleep",
};

export function validateProbe(fields: Fields, kind: ProbeKind, scope: PortScope): Probe | undefined {
  const handlerName = pickHandler(fields, PROBE_HANDLERS, []);
  const handler = handlerName === undefined ? undefined : readProbeHandler(fields, handlerName, scope);
  const probe: Probe = {
    handler: handler ?? { type: "exec", command: [] },
    initialDelaySeconds: fields.int("initialDelaySeconds", { min: 0, default: PROBE_DEFAULTS.initialDelaySeconds }),
    timeoutSeconds: defaultedPositive(fields, "timeoutSeconds", PROBE_DEFAULTS.timeoutSeconds),
    periodSeconds: defaultedPositive(fields, "periodSeconds", PROBE_DEFAULTS.periodSeconds),
    successThreshold: defaultedPositive(fields, "successThreshold", PROBE_DEFAULTS.successThreshold),
    failureThreshold: defaultedPositive(fields, "failureThreshold", PROBE_DEFAULTS.failureThreshold),
  };
  if (kind !== "readiness" && probe.successThreshold !== 1) {
    fields.fail("successThreshold", `must be 1 for ${kind} probes (found ${probe.successThreshold})`);
  }
  if (fields.has("terminationGracePeriodSeconds")) {
    if (kind === "readiness") {
      fields.fail("terminationGracePeriodSeconds", "must not be set for readiness probes (only liveness and startup kill the container)");
    } else {
      probe.terminationGracePeriodSeconds = fields.int("terminationGracePeriodSeconds", { min: 1, default: 1 });
    }
  }
  return handler === undefined ? undefined : probe;
}

/** `lifecycle.postStart` or `lifecycle.preStop`: exactly one of exec, httpGet, sleep. */
export function validateLifecycleHandler(fields: Fields, scope: PortScope, gracePeriodSeconds?: number): LifecycleHandler | undefined {
  const handlerName = pickHandler(fields, LIFECYCLE_HANDLERS, ["tcpSocket"]);
  switch (handlerName) {
    case undefined:
      return undefined;
    case "exec":
      return readExec(fields);
    case "httpGet":
      return readHttpGet(fields, scope);
    case "sleep":
      return readSleep(fields, gracePeriodSeconds);
  }
}

function readProbeHandler(fields: Fields, name: (typeof PROBE_HANDLERS)[number], scope: PortScope): ProbeHandler | undefined {
  switch (name) {
    case "exec":
      return readExec(fields);
    case "httpGet":
      return readHttpGet(fields, scope);
    case "tcpSocket":
      return readTcpSocket(fields, scope);
    case "grpc":
      return readGrpc(fields);
  }
}

/**
 * Exactly one handler key must be present. Unsupported handler keys count toward "exactly one"
 * (so `exec` plus a lifecycle `tcpSocket` is still two) and, when alone, are refused with their own reason.
 */
function pickHandler<T extends string>(fields: Fields, allowed: readonly T[], unsupported: readonly string[]): T | undefined {
  const found = [...allowed, ...unsupported].filter((key) => fields.has(key));
  if (found.length !== 1) {
    fields.fail(undefined, `needs exactly one of ${allowed.join(", ")} (found ${found.join(", ") || "none"})`);
    return undefined;
  }
  const name = found[0]!;
  if (unsupported.includes(name)) {
    fields.fail(name, UNSUPPORTED_HANDLERS[name] ?? "not supported");
    return undefined;
  }
  return name as T;
}

/** 0 means "use the default" in the API (the Go field is not a pointer); below 0 is refused. */
function defaultedPositive(fields: Fields, key: string, fallback: number): number {
  const value = fields.int(key, { default: fallback });
  if (value === 0) return fallback;
  if (value < 0) {
    fields.fail(key, `must be greater than or equal to 1 (found ${value}; 0 means the default, ${fallback})`);
    return fallback;
  }
  return value;
}

function readExec(parent: Fields): ExecAction | undefined {
  const fields = parent.object("exec");
  if (!fields) return undefined;
  const command = fields.stringList("command");
  if (command.length === 0 && !fields.has("command")) fields.fail("command", "required");
  else if (command.length === 0 && Array.isArray(fields.raw("command"))) fields.fail("command", "required (found an empty list)");
  return { type: "exec", command };
}

function readHttpGet(parent: Fields, scope: PortScope): HttpGetAction | undefined {
  const fields = parent.object("httpGet");
  if (!fields) return undefined;
  const httpHeaders: HttpHeader[] = [];
  for (const header of fields.objectList("httpHeaders")) {
    const name = header.requiredString("name");
    const problem = name === "" ? undefined : checkHttpHeaderName(name);
    if (problem) header.fail("name", problem);
    httpHeaders.push({ name, value: header.string("value") ?? "" });
  }
  return {
    type: "httpGet",
    scheme: fields.oneOf("scheme", ["HTTP", "HTTPS"] as const, "HTTP"),
    host: fields.string("host") ?? "",
    path: fields.string("path") || "/",
    ...readPort(fields, scope),
    httpHeaders,
  };
}

function readTcpSocket(parent: Fields, scope: PortScope): TcpSocketAction | undefined {
  const fields = parent.object("tcpSocket");
  if (!fields) return undefined;
  return { type: "tcpSocket", host: fields.string("host") ?? "", ...readPort(fields, scope) };
}

/**
 * The API server's validateGRPCAction: the port is a number (an int32 in the API, so no named port)
 * from 1 to 65535, and required; `service` may be left out, the API's default being "". `mode`
 * (TLS, behind the alpha GRPCContainerProbeTLS gate, off by default) is dropped by the API server
 * and not read: the probe is plaintext.
 */
function readGrpc(parent: Fields): GrpcAction | undefined {
  const fields = parent.object("grpc");
  if (!fields) return undefined;
  if (!fields.has("port")) fields.fail("port", "required");
  const port = fields.int("port", { min: 1, max: 65535, default: 0 });
  return { type: "grpc", port, service: fields.string("service") ?? "" };
}

/**
 * The API server's validateSleepAction (zero allowed since PodLifecycleSleepActionAllowZero, GA in
 * 1.34): the error is on `sleep` itself, bounded by the pod's grace period.
 */
function readSleep(parent: Fields, gracePeriodSeconds: number | undefined): SleepAction | undefined {
  const fields = parent.object("sleep");
  if (!fields) return undefined;
  if (!fields.has("seconds")) fields.fail("seconds", "required");
  const seconds = fields.int("seconds", { default: 0 });
  if (gracePeriodSeconds !== undefined && (seconds < 0 || seconds > gracePeriodSeconds)) {
    parent.fail("sleep", `${seconds}: must be non-negative and less than terminationGracePeriodSeconds (${gracePeriodSeconds})`);
  }
  return { type: "sleep", seconds: Math.max(seconds, 0) };
}

/** A port number (1-65535) or the name of one of the container's ports. */
function readPort(fields: Fields, scope: PortScope): { port: number; portName?: string } {
  const value = fields.raw("port");
  if (value === undefined) {
    fields.fail("port", "required");
    return { port: 0 };
  }
  if (typeof value === "number") return { port: fields.int("port", { min: 1, max: 65535, default: 0 }) };
  if (typeof value !== "string") {
    fields.fail("port", `must be a port number or a port name (found ${describeValue(value)})`);
    return { port: 0 };
  }
  const problem = checkPortName(value);
  if (problem) {
    fields.fail("port", `${problem}; a number must not be quoted`);
    return { port: 0, portName: value };
  }
  const declared = scope.ports.find((port) => port.name === value);
  if (!declared) {
    const names = scope.ports.flatMap((port) => (port.name ? [port.name] : []));
    fields.fail("port", `no port named ${JSON.stringify(value)} in ${formatPath(scope.path)} (names: ${names.join(", ") || "none"})`);
    return { port: 0, portName: value };
  }
  return { port: declared.containerPort, portName: value };
}
