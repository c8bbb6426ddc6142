/**
 * `describe pod` text, laid out like kubectl's describePod (kubectl/pkg/describe/describe.go):
 * the same fields in the same order, through the same tabwriter settings (minwidth 0, padding 2),
 * plus a minikubelet-only `Attempts:` table of every start of each container, which the database
 * remembers and the API forgets. Pure: the caller passes the rows and `now`.
 */
import type { ContainerSpec, PodSpec, Volume } from "../../manifest/types.ts";
import { describeProbe } from "../../manifest/describe-probe.ts";
import { humanDuration, parseTimestamp } from "../../printers/age.ts";
import type { V1ContainerState, V1ContainerStatus, V1Pod } from "../../v1/v1.ts";
import type { AttemptRow, EventRow } from "../../store/queries.ts";
import { killCauseWords } from "../../kubelet/lifecycle/kill-cause.ts";
import { describeEnvValue } from "./describe-env.ts";
import { TabWriter } from "../tabwriter.ts";

export interface DescribeInput {
  pod: V1Pod;
  /** The validated spec the agent ran (defaults filled): containers, probes, volumes. */
  spec: PodSpec;
  /** The pod's newest events (all of them, or as many as describe shows), oldest first. */
  events: EventRow[];
  /** How many events the pod has in all, when more than `events`: the rest are named, not shown. */
  eventTotal?: number;
  attempts: AttemptRow[];
  now: number;
  /**
   * When the agent finished deleting the pod (its stop ended, its containers were removed), with
   * why; absent for a live pod. A deleted pod is no longer Terminating, however long ago it ended.
   */
  deleted?: { at: number; cause?: "removed" | "replaced" | "shutdown" };
  /** Minutes east of UTC for the RFC 1123 times; default the local zone. */
  utcOffsetMinutes?: number;
}

const DELETION_CAUSES = {
  removed: "its manifest was removed",
  replaced: "replaced by the new version of its manifest",
  shutdown: "stopped when the agent exited with --stop-pods-on-exit",
} as const;

/** Why the agent deleted a pod, in words (`describe`'s Deleted line, `logs` of a deleted pod). */
export function deletionCauseText(cause: keyof typeof DELETION_CAUSES | undefined): string {
  return DELETION_CAUSES[cause ?? "removed"];
}

/** kubectl truncates longer annotations (maxAnnotationLen). */
const MAX_ANNOTATION_LEN = 140;

export function describePodText(input: DescribeInput): string {
  const { pod, spec, now } = input;
  const time = (value: string | null | undefined) => rfc1123z(parseTimestamp(value) ?? 0, input.utcOffsetMinutes);
  const w = new TabWriter({ minWidth: 0, padding: 2 });
  const status = pod.status ?? {};
  w.write(`Name:\t${pod.metadata.name}\n`);
  w.write(`Namespace:\t${pod.metadata.namespace ?? "default"}\n`);
  w.write(pod.spec.nodeName ? `Node:\t${pod.spec.nodeName}/${status.hostIP ?? ""}\n` : "Node:\t<none>\n");
  if (status.startTime) w.write(`Start Time:\t${time(status.startTime)}\n`);
  writeLabels(w, "Labels", pod.metadata.labels ?? {});
  writeAnnotations(w, "Annotations", pod.metadata.annotations ?? {});
  if (input.deleted) {
    w.write(`Status:\t${status.phase ?? ""}\n`);
    w.write(`Deleted:\t${rfc1123z(input.deleted.at, input.utcOffsetMinutes)} (${humanDuration(now - input.deleted.at)} ago, ${deletionCauseText(input.deleted.cause)})\n`);
  } else if (pod.metadata.deletionTimestamp && status.phase !== "Failed" && status.phase !== "Succeeded") {
    w.write(`Status:\tTerminating (lasts ${humanDuration(now - (parseTimestamp(pod.metadata.deletionTimestamp) ?? now))})\n`);
    w.write(`Termination Grace Period:\t${pod.metadata.deletionGracePeriodSeconds ?? spec.terminationGracePeriodSeconds}s\n`);
  } else {
    w.write(`Status:\t${status.phase ?? ""}\n`);
  }
  if (status.reason) w.write(`Reason:\t${status.reason}\n`);
  if (status.message) w.write(`Message:\t${status.message}\n`);
  w.write(`IP:\t${status.podIP ?? ""}\n`);
  const ips = status.podIPs ?? [];
  if (ips.length === 0) w.write("IPs:\t<none>\n");
  else {
    w.write("IPs:\n");
    for (const ip of ips) w.write(`  IP:\t${ip.ip}\n`);
  }
  if (spec.initContainers.length > 0) writeContainers(w, "Init Containers", spec.initContainers, status.initContainerStatuses ?? [], time, pod);
  writeContainers(w, "Containers", spec.containers, status.containerStatuses ?? [], time, pod);
  const ephemeral = spec.ephemeralContainers ?? [];
  if (ephemeral.length > 0) writeContainers(w, "Ephemeral Containers", ephemeral, status.ephemeralContainerStatuses ?? [], time, pod);
  const conditions = status.conditions ?? [];
  if (conditions.length > 0) {
    w.write("Conditions:\n  Type\tStatus\n");
    for (const c of conditions) w.write(`  ${c.type} \t${c.status} \n`);
  }
  writeVolumes(w, spec.volumes);
  w.write(`QoS Class:\t${status.qosClass ?? "BestEffort"}\n`);
  w.write("Node-Selectors:\t<none>\n");
  w.write("Tolerations:\t<none>\n");
  w.flush();
  writeAttempts(w, input.attempts, now);
  w.flush();
  writeEvents(w, input.events, input.eventTotal ?? input.events.length, pod, now);
  return w.toString();
}

type TimeFormat = (value: string | null | undefined) => string;

function writeContainers(w: TabWriter, label: string, containers: ContainerSpec[], statuses: V1ContainerStatus[], time: TimeFormat, pod: V1Pod): void {
  const byName = new Map(statuses.map((s) => [s.name, s]));
  w.write(`${label}:${containers.length === 0 ? " <none>" : ""}\n`);
  for (const container of containers) {
    const status = byName.get(container.name);
    w.write(`  ${container.name}:\n`);
    if (status) w.write(`    Container ID:\t${status.containerID ?? ""}\n`);
    w.write(`    Image:\t${container.image}\n`);
    if (status) w.write(`    Image ID:\t${status.imageID ?? ""}\n`);
    const ports = container.ports.map((p) => `${p.containerPort}/${p.protocol}${p.name ? ` (${p.name})` : ""}`).join(", ");
    const hostPorts = container.ports.map((p) => `0/${p.protocol}${p.name ? ` (${p.name})` : ""}`).join(", ");
    w.write(ports.includes(",") ? `    Ports:\t${ports}\n` : `    Port:\t${ports || "<none>"}\n`);
    w.write(hostPorts.includes(",") ? `    Host Ports:\t${hostPorts}\n` : `    Host Port:\t${hostPorts || "<none>"}\n`);
    writeLines(w, "Command", container.command);
    writeLines(w, "Args", container.args);
    if (status) {
      writeState(w, "State", status.state, time);
      if (status.lastState?.terminated) writeState(w, "Last State", status.lastState, time);
      w.write(`    Ready:\t${status.ready ? "True" : "False"}\n`);
      w.write(`    Restart Count:\t${status.restartCount}\n`);
    }
    writeResources(w, container);
    if (container.livenessProbe) w.write(`    Liveness:\t${describeProbe(container.livenessProbe)}\n`);
    if (container.readinessProbe) w.write(`    Readiness:\t${describeProbe(container.readinessProbe)}\n`);
    if (container.startupProbe) w.write(`    Startup:\t${describeProbe(container.startupProbe)}\n`);
    w.write(`    Environment:${container.env.length === 0 ? "\t<none>" : ""}\n`);
    for (const env of container.env) {
      describeEnvValue(env, container, pod).split("\n").forEach((line, i) => w.write(i === 0 ? `      ${env.name}:\t${line}\n` : `      \t${line}\n`));
    }
    w.write(`    Mounts:${container.volumeMounts.length === 0 ? "\t<none>" : ""}\n`);
    const mounts = [...container.volumeMounts].sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
    for (const mount of mounts) {
      const flags = [mount.readOnly ? "ro" : "rw", ...(mount.subPath ? [`path=${JSON.stringify(mount.subPath)}`] : [])];
      w.write(`      ${mount.mountPath} from ${mount.name} (${flags.join(",")})\n`);
    }
  }
}

/** kubectl's describeContainerResources: names sorted, quantities as served. */
function writeResources(w: TabWriter, container: ContainerSpec): void {
  for (const [label, list] of [["Limits", container.resources?.limits], ["Requests", container.resources?.requests]] as const) {
    const names = Object.keys(list ?? {}).sort();
    if (names.length === 0) continue;
    w.write(`    ${label}:\n`);
    for (const name of names) w.write(`      ${name}:\t${list![name]}\n`);
  }
}

function writeLines(w: TabWriter, label: string, values: string[]): void {
  if (values.length === 0) return;
  w.write(`    ${label}:\n`);
  for (const value of values) for (const line of value.split("\n")) w.write(`      ${line}\n`);
}

function writeState(w: TabWriter, label: string, state: V1ContainerState | undefined, time: TimeFormat): void {
  if (state?.running) {
    w.write(`    ${label}:\tRunning\n`);
    w.write(`      Started:\t${time(state.running.startedAt)}\n`);
  } else if (state?.waiting) {
    w.write(`    ${label}:\tWaiting\n`);
    if (state.waiting.reason) w.write(`      Reason:\t${state.waiting.reason}\n`);
  } else if (state?.terminated) {
    const t = state.terminated;
    w.write(`    ${label}:\tTerminated\n`);
    if (t.reason) w.write(`      Reason:\t${t.reason}\n`);
    if (t.message) w.write(`      Message:\t${t.message}\n`);
    w.write(`      Exit Code:\t${t.exitCode}\n`);
    if (t.signal && t.signal > 0) w.write(`      Signal:\t${t.signal}\n`);
    w.write(`      Started:\t${time(t.startedAt)}\n`);
    w.write(`      Finished:\t${time(t.finishedAt)}\n`);
  } else {
    w.write(`    ${label}:\tWaiting\n`);
  }
}

function writeLabels(w: TabWriter, title: string, labels: Record<string, string>): void {
  const keys = Object.keys(labels).sort();
  if (keys.length === 0) return void w.write(`${title}:\t<none>\n`);
  keys.forEach((key, i) => w.write(`${i === 0 ? `${title}:` : ""}\t${key}=${labels[key]}\n`));
}

function writeAnnotations(w: TabWriter, title: string, annotations: Record<string, string>): void {
  const keys = Object.keys(annotations)
    .filter((key) => key !== "kubectl.kubernetes.io/last-applied-configuration")
    .sort();
  if (keys.length === 0) return void w.write(`${title}:\t<none>\n`);
  w.write(`${title}:\t`);
  keys.forEach((key, i) => {
    if (i !== 0) w.write("\t");
    const value = annotations[key]!.replace(/\n$/, "");
    if (value.length + key.length + 2 > MAX_ANNOTATION_LEN || value.includes("\n")) {
      w.write(`${key}:\n`);
      for (const line of value.split("\n")) w.write(`\t  ${shorten(line, MAX_ANNOTATION_LEN - 2)}\n`);
    } else {
      w.write(`${key}: ${value}\n`);
    }
  });
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function writeVolumes(w: TabWriter, volumes: Volume[]): void {
  if (volumes.length === 0) return void w.write("Volumes:\t<none>\n");
  w.write("Volumes:\n");
  for (const volume of volumes) {
    w.write(`  ${volume.name}:\n`);
    if (volume.type === "hostPath") {
      w.write("    Type:\tHostPath (bare host directory volume)\n");
      w.write(`    Path:\t${volume.path}\n`);
      w.write(`    HostPathType:\t${volume.hostPathType || ""}\n`);
    } else if (volume.type === "downwardAPI") {
      w.write("    Type:\tDownwardAPI (a volume populated by information about the pod)\n    Items:\n");
      for (const item of volume.items) w.write(`      ${item.fieldRef?.fieldPath ?? item.resourceFieldRef?.resource} -> ${item.path}\n`);
    } else if (volume.type === "configMap") {
      w.write(`    Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${volume.source.name}\n    Optional:\t${volume.source.optional}\n`);
    } else if (volume.type === "secret") {
      w.write(`    Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${volume.source.name}\n    Optional:\t${volume.source.optional}\n`);
    } else if (volume.type === "projected") {
      w.write("    Type:\tProjected (a volume that contains injected data from multiple sources)\n");
      for (const projection of volume.sources) {
        if (projection.kind === "secret") w.write(`    SecretName:\t${projection.source.name}\n    Optional:\t${projection.source.optional}\n`);
        else if (projection.kind === "downwardAPI") w.write("    DownwardAPI:\ttrue\n");
        else if (projection.kind === "configMap") w.write(`    ConfigMapName:\t${projection.source.name}\n    Optional:\t${projection.source.optional}\n`);
        else w.write(`    TokenExpirationSeconds:\t${projection.expirationSeconds}\n`);
      }
    } else {
      w.write("    Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
      w.write(`    Medium:\t${volume.medium ?? ""}\n`);
      w.write(`    SizeLimit:\t${volume.sizeLimit ?? "<unset>"}\n`);
    }
  }
}

/**
 * minikubelet's addition: every start of each container, oldest first. `Killed By` tells apart what
 * the kubelet reports alike (a liveness kill and a grace-period SIGKILL are both reason Error).
 */
function writeAttempts(w: TabWriter, attempts: AttemptRow[], now: number): void {
  if (attempts.length === 0) return void w.write("Attempts:\t<none>\n");
  w.write("Attempts:\n  Container\tAttempt\tStarted\tDuration\tExit Code\tReason\tKilled By\tContainer ID\n");
  w.write("  ---------\t-------\t-------\t--------\t---------\t------\t---------\t------------\n");
  for (const a of attempts) {
    const started = a.startedAt === null ? "<unknown>" : `${humanDuration(now - a.startedAt)} ago`;
    const duration =
      a.startedAt === null ? "<unknown>" : a.finishedAt === null ? `${humanDuration(now - a.startedAt)} (running)` : humanDuration(a.finishedAt - a.startedAt);
    const exit = a.exitCode === null ? "-" : a.signal ? `${a.exitCode} (signal ${a.signal})` : String(a.exitCode);
    const killedBy = killCauseWords(a.killCause, a.graceExpired === true);
    w.write(`  ${a.container}\t${a.attempt}\t${started}\t${duration}\t${exit}\t${a.reason ?? "-"}\t${killedBy}\t${a.runtimeId || "<none>"}\n`);
  }
}

/**
 * kubectl's DescribeEvents: oldest last-seen first, `Age` as `5s (x4 over 2m)` for repeats. kubectl
 * shows every event the API server still keeps (an hour's worth); the database keeps more, so when
 * only the newest are shown a line says how many are hidden and how to list them.
 */
function writeEvents(w: TabWriter, events: EventRow[], total: number, pod: V1Pod, now: number): void {
  if (events.length === 0) return void w.write("Events:\t<none>\n");
  w.write("Events:\n");
  if (total > events.length) {
    const namespace = pod.metadata.namespace ?? "default";
    w.write(`  (showing the newest ${events.length} of ${total} events; \`minikubelet events --for pod/${pod.metadata.name} -n ${namespace}\` lists all)\n`);
  }
  w.write("  Type\tReason\tAge\tFrom\tMessage\n");
  w.write("  ----\t------\t----\t----\t-------\n");
  for (const e of events) w.write(`  ${e.type}\t${e.reason}\t${eventAge(e, now)}\tkubelet\t${e.message.trim()}\n`);
}

/** `5s`, or `5s (x4 over 2m)` when the event repeated: shared with `events`. */
export function eventAge(event: Pick<EventRow, "count" | "firstAt" | "lastAt">, now: number): string {
  const first = humanDuration(now - event.firstAt);
  return event.count > 1 ? `${humanDuration(now - event.lastAt)} (x${event.count} over ${first})` : first;
}

const DAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Go's time.RFC1123Z: `Thu, 01 Jan 2026 12:00:00 +0000`, in the given offset (default local). */
export function rfc1123z(ms: number, utcOffsetMinutes = -new Date(ms).getTimezoneOffset()): string {
  const d = new Date(Math.floor(ms / 1000) * 1000 + utcOffsetMinutes * 60_000);
  const two = (n: number) => String(n).padStart(2, "0");
  const sign = utcOffsetMinutes < 0 ? "-" : "+";
  const offset = Math.abs(utcOffsetMinutes);
  return (
    `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} ${sign}${two(Math.floor(offset / 60))}${two(offset % 60)}`
  );
}
