/**
 * Is each probe the right kind of check? Liveness answers "is this process stuck?", so it must
 * not depend on another service (a slow database would restart every replica at once), must not be
 * the readiness check (which may fail for reasons a restart cannot fix), and a probe must be cheap.
 */
import type { ContainerHistory } from "./history.ts";
import type { Finding, ReviewContainer, ReviewProbe, ReviewTarget } from "./model.ts";
import { describeTarget, finding, portRefOf, probePort, sameHandler, tcpPorts } from "./rule-support.ts";
import { execCommandText, heavyCommand, otherHostsCalled } from "./exec-command.ts";

export function kindFindings(target: ReviewTarget, container: ReviewContainer, history?: ContainerHistory): Finding[] {
  const out: Finding[] = [];
  const { liveness, readiness, startup } = container.probes;
  if (liveness) out.push(...livenessCallsOtherService(container, liveness, history));
  if (liveness && readiness && sameHandler(liveness.handler, readiness.handler)) {
    out.push(livenessSameAsReadiness(container, liveness, readiness, history));
  }
  for (const probe of [liveness, readiness, startup]) {
    if (probe?.handler.type !== "exec") continue;
    const heavy = heavyCommand(probe.handler.command);
    if (!heavy) continue;
    out.push(
      finding({
        id: "exec-heavy-command",
        category: "kind",
        severity: "warning",
        container,
        probe,
        field: ["exec", "command"],
        message: `the ${probe.kind} probe runs ${heavy} every ${probe.timing.periodSeconds}s inside the container: a new process (or several) on every check, slow to start and slower under load, where a timeout counts as a failure`,
        fix: "serve a cheap health endpoint and probe it with httpGet (or tcpSocket on the port); keep the exec command a single small binary",
        history,
      }),
    );
  }
  if (!readiness && !container.sidecar && container.longRunning) {
    const served = servedPort(container);
    if (served !== undefined) {
      out.push(
        finding({
          id: "no-readiness-probe",
          category: "kind",
          severity: "warning",
          container,
          field: ["readinessProbe"],
          message: `the container serves port ${served} but has no readiness probe: it is Ready (and gets Service traffic) the moment it starts, and stays Ready when it cannot serve`,
          fix: `add a readinessProbe on port ${served} (an httpGet on a readiness path such as /readyz, or tcpSocket)`,
          edits: [{ op: "set", path: [...container.path, "readinessProbe"], value: { tcpSocket: { port: served }, periodSeconds: 5 }, comment: `review: added (no-readiness-probe): Ready only while port ${served} accepts connections` }],
        }),
      );
    }
  }
  return out;
}

/** The port a Service would send traffic to: the first declared TCP port, else the port a probe checks. */
function servedPort(container: ReviewContainer): string | number | undefined {
  const declared = tcpPorts(container)[0];
  if (declared) return portRefOf(declared);
  for (const probe of Object.values(container.probes)) {
    if (probe.handler.type !== "exec" && probe.handler.type !== "grpc" && probe.handler.host === "") return probePort(probe.handler);
  }
  return undefined;
}

function livenessCallsOtherService(container: ReviewContainer, liveness: ReviewProbe, history?: ContainerHistory): Finding[] {
  const handler = liveness.handler;
  const fix = "probe only this container (no host: the kubelet uses the pod IP); check dependencies in the readiness probe, or not at all";
  if ((handler.type === "httpGet" || handler.type === "tcpSocket") && handler.host !== "") {
    return [
      finding({
        id: "liveness-calls-other-service",
        category: "kind",
        severity: "warning",
        container,
        probe: liveness,
        field: [handler.type, "host"],
        message: `liveness checks ${handler.host}, not this container: when that host is slow or down, every replica fails liveness together and is restarted, which fixes nothing`,
        fix,
        history,
        edits: [{ op: "delete", path: [...liveness.path, handler.type, "host"], comment: `review: removed host ${handler.host} (liveness-calls-other-service): liveness checks this container only` }],
      }),
    ];
  }
  if (handler.type !== "exec") return [];
  const hosts = otherHostsCalled(handler.command);
  if (hosts.length === 0) return [];
  return [
    finding({
      id: "liveness-calls-other-service",
      category: "kind",
      severity: "warning",
      container,
      probe: liveness,
      field: ["exec", "command"],
      message: `liveness runs "${execCommandText(handler.command)}", which calls ${hosts.join(", ")}: when that service is slow or down, every replica fails liveness together and is restarted`,
      fix,
      history,
    }),
  ];
}

function livenessSameAsReadiness(container: ReviewContainer, liveness: ReviewProbe, readiness: ReviewProbe, history?: ContainerHistory): Finding {
  const port = probePort(liveness.handler);
  const identical = JSON.stringify(liveness.timing) === JSON.stringify(readiness.timing);
  return finding({
    id: "liveness-same-as-readiness",
    category: "kind",
    severity: "warning",
    container,
    probe: liveness,
    message: `liveness ${identical ? "is identical to" : "runs the same check as"} readiness (${describeTarget(liveness.handler)}): whatever makes the pod unready (load, a dependency) also gets it killed, at the same moment`,
    fix: "give liveness its own cheap check that only says the process is not stuck (a /livez path, or tcpSocket on the port), with a higher failureThreshold than readiness",
    history,
    edits: port !== undefined && liveness.handler.type === "httpGet" ? livenessToTcp(liveness, port) : [],
  });
}

/** Replaces an httpGet liveness check with a TCP check of the same port: alive means accepting connections. */
function livenessToTcp(liveness: ReviewProbe, port: string | number) {
  return [
    { op: "delete" as const, path: [...liveness.path, "httpGet"], comment: "" },
    {
      op: "set" as const,
      path: [...liveness.path, "tcpSocket"],
      value: { port },
      comment: `review: was the readiness check (liveness-same-as-readiness): liveness only asks whether port ${port} accepts connections`,
    },
  ];
}
