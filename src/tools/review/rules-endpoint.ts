/**
 * Does each probe check the right endpoint? Its port must be one the container declares (a named
 * port that is not declared never resolves, so the probe fails every time), readiness must check a
 * port the container serves, and a liveness path should be a health path, not a page.
 */
import type { ContainerHistory } from "./history.ts";
import type { Finding, ReviewContainer, ReviewProbe } from "./model.ts";
import { finding, portRefOf, probePort, resolvePort, tcpPorts } from "./rule-support.ts";

/** Paths that say "health" (/healthz, /livez, /readyz, /health, /ping, /actuator/health...). */
const HEALTH_PATH = /(health|livez|readyz|alive|liveness|readiness|ready|ping|status|\/hc\b|\/ok\b)/i;

export function endpointFindings(container: ReviewContainer, history?: ContainerHistory): Finding[] {
  const out: Finding[] = [];
  for (const probe of Object.values(container.probes)) {
    const port = portFinding(container, probe, history);
    if (port) out.push(port);
  }
  const liveness = container.probes.liveness;
  if (liveness?.handler.type === "httpGet" && !HEALTH_PATH.test(liveness.handler.path.split("?")[0]!)) {
    out.push(
      finding({
        id: "liveness-path-not-health",
        category: "endpoint",
        severity: "info",
        container,
        probe: liveness,
        field: ["httpGet", "path"],
        message: `liveness requests ${liveness.handler.path}, which looks like a page rather than a health path: rendering it may be slow or touch a backend, and a failure restarts the container`,
        fix: "serve a cheap endpoint that only answers for the process itself (/livez, /healthz) and probe that",
        history,
      }),
    );
  }
  return out;
}

function portFinding(container: ReviewContainer, probe: ReviewProbe, history?: ContainerHistory): Finding | undefined {
  const port = probePort(probe.handler);
  if (port === undefined || port === 0) return undefined;
  // A probe of another host is about that host's ports (and is a finding of its own).
  if (probe.handler.type !== "grpc" && probe.handler.type !== "exec" && probe.handler.host !== "") return undefined;
  if (resolvePort(container, port) !== undefined) return undefined;
  const declared = tcpPorts(container);
  const only = declared.length === 1 ? portRefOf(declared[0]!) : undefined;
  const handlerKey = probe.handler.type;
  const edits = only === undefined ? undefined : [{ op: "set" as const, path: [...probe.path, handlerKey, "port"], value: only, comment: `review: was ${port}, not a port of this container (${idFor(probe)})` }];
  const list = declared.map((p) => (p.name ? `${p.name}=${p.containerPort}` : String(p.containerPort))).join(", ");
  if (typeof port === "string") {
    return finding({
      id: idFor(probe),
      category: "endpoint",
      severity: "error",
      container,
      probe,
      field: [handlerKey, "port"],
      message: `the ${probe.kind} probe uses port "${port}", but the container has no port of that name (${list ? `ports: ${list}` : "no ports declared"}): the kubelet cannot resolve it and the probe fails every time`,
      fix: only === undefined ? "name one of the container's ports, or declare the port" : `use the container's port ${only}`,
      edits,
      history,
    });
  }
  if (declared.length === 0) {
    return finding({
      id: idFor(probe),
      category: "endpoint",
      severity: "info",
      container,
      probe,
      field: [handlerKey, "port"],
      message: `the ${probe.kind} probe checks port ${port}, which the container does not declare (it declares no ports)`,
      fix: `declare it (ports: [{containerPort: ${port}}]) so readers, Services and this review see what the container serves`,
      history,
    });
  }
  const readiness = probe.kind === "readiness";
  return finding({
    id: idFor(probe),
    category: "endpoint",
    severity: "warning",
    container,
    probe,
    field: [handlerKey, "port"],
    message: readiness
      ? `readiness checks port ${port}, which the container does not serve (ports: ${list}): the pod turns Ready on a port its Service sends no traffic to`
      : `the ${probe.kind} probe checks port ${port}, which is not among the container's ports (${list})`,
    fix: only === undefined ? "probe one of the ports the container serves" : `probe the port the container serves, ${only}`,
    edits,
    history,
  });
}

function idFor(probe: ReviewProbe): string {
  return probe.kind === "readiness" ? "readiness-port-not-declared" : "probe-port-not-declared";
}
