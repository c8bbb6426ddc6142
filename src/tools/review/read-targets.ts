/**
 * Finds the pod specs in a decoded manifest document (a Pod, or the pod template of a workload) and
 * reads their containers' ports and probes as written, with the API server's probe defaults. Type
 * errors are collected as issues with their field paths (the manifest module's Fields), never thrown.
 */
import type { IssueList } from "../../manifest/errors.ts";
import type { ProbeKind } from "../../manifest/types.ts";
import { describeValue, objectAt, type Fields } from "../../manifest/fields.ts";
import { PROBE_DEFAULTS } from "../../manifest/validation/validate-probe.ts";
import type { PortRef, ProbeTiming, ReviewContainer, ReviewHandler, ReviewPort, ReviewProbe, ReviewTarget } from "./model.ts";

/** Where each workload kind keeps its pod spec, and whether its pods run until stopped. */
const POD_SPEC_PATHS: Record<string, { path: readonly string[]; longRunning: boolean }> = {
  Pod: { path: ["spec"], longRunning: true },
  Deployment: { path: ["spec", "template", "spec"], longRunning: true },
  StatefulSet: { path: ["spec", "template", "spec"], longRunning: true },
  DaemonSet: { path: ["spec", "template", "spec"], longRunning: true },
  ReplicaSet: { path: ["spec", "template", "spec"], longRunning: true },
  ReplicationController: { path: ["spec", "template", "spec"], longRunning: true },
  Job: { path: ["spec", "template", "spec"], longRunning: false },
  CronJob: { path: ["spec", "jobTemplate", "spec", "template", "spec"], longRunning: false },
};

const REVIEWED_KINDS = Object.keys(POD_SPEC_PATHS).join(", ");

const PROBE_FIELDS: readonly [string, ProbeKind][] = [
  ["livenessProbe", "liveness"],
  ["readinessProbe", "readiness"],
  ["startupProbe", "startup"],
];

/**
 * The pod specs in `root`: its own when its kind is one we review, each item's in a List (what
 * `kubectl get -o yaml` prints), none for other kinds (a Service, a ConfigMap), which a
 * multi-document file may hold beside its workloads.
 */
export function readTargets(root: Fields, document: number, itemKind?: string): ReviewTarget[] {
  // A typed list's items (a PodList's, from the API) carry no kind of their own.
  const kind = root.string("kind") ?? itemKind;
  if (kind === undefined) {
    if (!root.has("kind")) root.fail("kind", `required: expected one of ${REVIEWED_KINDS}, or a List of them (other kinds are skipped)`);
    return [];
  }
  if (kind.endsWith("List")) {
    const typed = kind === "List" ? undefined : kind.slice(0, -"List".length);
    return root.objectList("items").flatMap((item) => readTargets(item, document, typed));
  }
  const target = readTarget(root, kind, document);
  return target ? [target] : [];
}

function readTarget(root: Fields, kind: string, document: number): ReviewTarget | undefined {
  const where = POD_SPEC_PATHS[kind];
  if (!where) return undefined;
  const metadata = root.object("metadata");
  const name = metadata?.string("name") ?? metadata?.string("generateName") ?? "";
  let fields: Fields | undefined = root;
  for (const key of where.path) {
    const next: Fields | undefined = fields.object(key);
    if (!next) {
      if (!fields.has(key)) fields.fail(key, "required");
      return undefined;
    }
    fields = next;
  }
  const spec = fields;
  const restartPolicy = spec.string("restartPolicy") ?? "Always";
  const containers = [
    ...spec.objectList("initContainers").flatMap((container) => (container.string("restartPolicy") === "Always" ? [readContainer(container, true, where.longRunning)] : [])),
    ...spec.objectList("containers").map((container) => readContainer(container, false, where.longRunning && (container.string("restartPolicy") ?? restartPolicy) === "Always")),
  ];
  return {
    kind,
    name,
    document,
    specPath: spec.path,
    longRunning: where.longRunning && restartPolicy === "Always",
    containers,
  };
}

function readContainer(fields: Fields, sidecar: boolean, longRunning: boolean): ReviewContainer {
  const probes: ReviewContainer["probes"] = {};
  for (const [key, kind] of PROBE_FIELDS) {
    const probe = fields.object(key);
    if (!probe) continue;
    const read = readProbe(probe, kind);
    if (read) probes[kind] = read;
  }
  return { name: fields.string("name") ?? "", path: fields.path, ports: readPorts(fields), sidecar, longRunning, probes };
}

function readPorts(fields: Fields): ReviewPort[] {
  return fields.objectList("ports").map((port) => {
    const read: ReviewPort = {
      containerPort: port.int("containerPort", { min: 1, max: 65535, default: 0 }),
      protocol: port.string("protocol") ?? "TCP",
    };
    const name = port.string("name");
    if (name) read.name = name;
    return read;
  });
}

function readProbe(fields: Fields, kind: ProbeKind): ReviewProbe | undefined {
  const handler = readHandler(fields);
  const timing: ProbeTiming = {
    initialDelaySeconds: fields.int("initialDelaySeconds", { min: 0, default: PROBE_DEFAULTS.initialDelaySeconds }),
    timeoutSeconds: defaulted(fields, "timeoutSeconds", PROBE_DEFAULTS.timeoutSeconds),
    periodSeconds: defaulted(fields, "periodSeconds", PROBE_DEFAULTS.periodSeconds),
    successThreshold: defaulted(fields, "successThreshold", PROBE_DEFAULTS.successThreshold),
    failureThreshold: defaulted(fields, "failureThreshold", PROBE_DEFAULTS.failureThreshold),
  };
  return handler ? { kind, path: fields.path, handler, timing } : undefined;
}

/** 0 means the default in the API (the Go field is no pointer). */
function defaulted(fields: Fields, key: string, fallback: number): number {
  const value = fields.int(key, { min: 0, default: fallback });
  return value === 0 ? fallback : value;
}

function readHandler(fields: Fields): ReviewHandler | undefined {
  const found = ["exec", "httpGet", "tcpSocket", "grpc"].filter((key) => fields.has(key));
  if (found.length !== 1) {
    fields.fail(undefined, `needs exactly one of exec, httpGet, tcpSocket, grpc (found ${found.join(", ") || "none"})`);
    return undefined;
  }
  const handler = fields.object(found[0]!);
  if (!handler) return undefined;
  switch (found[0]) {
    case "exec":
      return { type: "exec", command: handler.stringList("command") };
    case "httpGet":
      return {
        type: "httpGet",
        host: handler.string("host") ?? "",
        path: handler.string("path") || "/",
        port: readPort(handler),
        scheme: handler.string("scheme") ?? "HTTP",
      };
    case "tcpSocket":
      return { type: "tcpSocket", host: handler.string("host") ?? "", port: readPort(handler) };
    default:
      return { type: "grpc", port: readPort(handler) };
  }
}

function readPort(fields: Fields): PortRef {
  const value = fields.raw("port");
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (typeof value === "string" && value !== "") return value;
  fields.fail("port", value === undefined ? "required" : `must be a port number or a port name (found ${describeValue(value)})`);
  return 0;
}

/** Every pod spec in one decoded document, or none; issues are added to `issues`. */
export function readDocument(raw: unknown, document: number, issues: IssueList): ReviewTarget[] {
  const root = objectAt(raw, [], issues);
  return root ? readTargets(root, document) : [];
}
