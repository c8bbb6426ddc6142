/** Small readings of a container shared by the review rules: ports, probe targets, findings. */
import type { FieldPath } from "../../manifest/errors.ts";
import type { ContainerHistory } from "./history.ts";
import { probeEvidence } from "./history.ts";
import type { Edit } from "./edits.ts";
import type { Finding, FindingCategory, PortRef, ReviewContainer, ReviewHandler, ReviewProbe, Severity } from "./model.ts";

/** The container's TCP ports (what a probe or a Service can reach). */
export function tcpPorts(container: ReviewContainer) {
  return container.ports.filter((port) => port.protocol === "TCP" && port.containerPort > 0);
}

/** The port number a probe's port refers to, when the container declares it. */
export function resolvePort(container: ReviewContainer, port: PortRef): number | undefined {
  if (typeof port === "number") return container.ports.some((p) => p.containerPort === port) ? port : undefined;
  return container.ports.find((p) => p.name === port)?.containerPort;
}

export function probePort(handler: ReviewHandler): PortRef | undefined {
  return handler.type === "exec" ? undefined : handler.port;
}

/** The probe in kubectl describe's words: `http-get http://:8080/healthz`, `tcp-socket :http`, `exec [pg_isready]`. */
export function describeTarget(handler: ReviewHandler): string {
  switch (handler.type) {
    case "httpGet":
      return `http-get ${handler.scheme.toLowerCase()}://${handler.host}:${handler.port}${handler.path.startsWith("/") ? "" : "/"}${handler.path}`;
    case "tcpSocket":
      return `tcp-socket ${handler.host}:${handler.port}`;
    case "grpc":
      return `grpc <pod>:${handler.port}`;
    case "exec":
      return `exec [${handler.command.join(" ")}]`;
  }
}

/** A port a probe can be pointed at: the declared port's name when it has one. */
export function portRefOf(port: { name?: string; containerPort: number }): PortRef {
  return port.name ?? port.containerPort;
}

export interface FindingInput {
  id: string;
  category: FindingCategory;
  severity: Severity;
  container: ReviewContainer;
  probe?: ReviewProbe;
  /** The field, relative to the probe (or to the container when there is no probe). */
  field?: FieldPath;
  message: string;
  fix: string;
  edits?: Edit[];
  history?: ContainerHistory;
}

export function finding(input: FindingInput): Finding {
  const base = input.probe?.path ?? input.container.path;
  const out: Finding = {
    id: input.id,
    category: input.category,
    severity: input.severity,
    container: input.container.name,
    path: [...base, ...(input.field ?? [])],
    message: input.message,
    fix: input.fix,
  };
  if (input.probe) out.probe = input.probe.kind;
  const evidence = input.probe ? probeEvidence(input.history, input.probe.kind) : [];
  if (evidence.length > 0) out.evidence = evidence;
  if (input.edits && input.edits.length > 0) out.edits = input.edits;
  return out;
}

export function sameHandler(a: ReviewHandler, b: ReviewHandler): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
