/**
 * `minikubelet validate DIR|FILE [--node NAME] [--runtime process|docker] [--strict]`: loads the
 * directory (or one file) exactly as `run` would with that runtime (default: run's, process) and
 * prints each pod with its containers and probes (each probe as `kubectl describe pod` prints it),
 * then each warning (`Warning: web.yaml: unknown field "spec.containers[0].comand"`) and every
 * refused file as one line on stderr. Exit 1 when any file is refused or the path is unusable.
 */
import { statSync } from "node:fs";
import type { ContainerSpec, PodSpec, Probe } from "../manifest/types.ts";
import { isSidecar } from "../manifest/types.ts";
import { ruleText } from "../kubelet/restart-policy.ts";
import { describeProbe } from "../manifest/describe-probe.ts";
import { podQosClass } from "../manifest/qos.ts";
import { ManifestSourceError } from "../manifest/errors.ts";
import { formatIssue } from "../manifest/errors.ts";
import { isRuntimeName, RUNTIME_NAMES } from "../manifest/runtime-rules.ts";
import { loadManifestFile, loadManifests, type LoadResult } from "../manifest/source.ts";
import { UsageError } from "./errors.ts";
import { reviewFiles } from "./review.ts";
import { processOutput, type CommandOutput } from "./stdio.ts";
import { nodeOption } from "./options.ts";

export interface ValidateCommandOptions {
  /** cac turns a numeric-looking value into a number, hence unknown. */
  node?: unknown;
  /** Whose rules apply beside the API's; `run`'s default runtime when absent. */
  runtime?: unknown;
  /** Unknown fields are errors rather than warnings. */
  strict?: boolean;
  /** Then review the valid pods' probes, as `review` does. */
  review?: boolean;
}


/** kubectl describe's order and labels for the three probes. */
const PROBE_LINES: readonly [label: string, pick: (container: ContainerSpec) => Probe | undefined][] = [
  ["Liveness", (container) => container.livenessProbe],
  ["Readiness", (container) => container.readinessProbe],
  ["Startup", (container) => container.startupProbe],
];

export function validateCommand(path: string, options: ValidateCommandOptions, output: CommandOutput = processOutput): number {
  const node = nodeOption(options.node);
  const runtime = options.runtime ?? "process";
  if (!isRuntimeName(runtime)) throw new UsageError(`--runtime must be ${RUNTIME_NAMES.join(" or ")} (got ${JSON.stringify(runtime)})`);
  const rules = { runtime, strict: options.strict === true };
  let result: LoadResult;
  try {
    result = isFile(path) ? loadManifestFile(path, node, rules) : loadManifests(path, node, rules);
  } catch (error) {
    if (!(error instanceof ManifestSourceError)) throw error;
    output.err(`error: ${error.message}\n`);
    return 1;
  }
  const pods = [...result.pods.values()];
  output.out(pods.map(formatPod).join(""));
  for (const pod of pods) {
    const file = pod.source.slice(pod.source.lastIndexOf("/") + 1);
    for (const issue of result.warnings.get(pod.key) ?? []) output.err(`Warning: ${file}: ${formatIssue(issue)}\n`);
  }
  for (const error of result.errors) output.err(`${error.message}\n`);
  output.out(`${plural(pods.length, "pod")} valid, ${plural(result.errors.length, "file")} refused\n`);
  const code = result.errors.length > 0 ? 1 : 0;
  if (!options.review || pods.length === 0) return code;
  output.out("\n");
  return Math.max(code, reviewFiles([...new Set(pods.map((pod) => pod.source))], { format: "text" }, output));
}

/** One pod: identity, restart policy, containers, QoS class, and each container's own restart policy and rules, resources and probes. */
export function formatPod(pod: PodSpec): string {
  const file = pod.source.slice(pod.source.lastIndexOf("/") + 1);
  const lines = [
    `Pod ${pod.fullName} (${file})`,
    `  Namespace:        ${pod.namespace}`,
    `  Restart Policy:   ${pod.restartPolicy}`,
    `  Init Containers:  ${pod.initContainers.map((c) => (isSidecar(c) ? `${c.name} (sidecar)` : c.name)).join(", ") || "<none>"}`,
    `  Containers:       ${pod.containers.map((c) => c.name).join(", ")}`,
    `  QoS Class:        ${podQosClass([...pod.initContainers, ...pod.containers], pod.resources)}`,
  ];
  for (const container of [...pod.initContainers, ...pod.containers]) {
    const resources = (["Limits", "Requests"] as const).flatMap((label) => {
      const list = container.resources?.[label === "Limits" ? "limits" : "requests"] ?? {};
      const names = Object.keys(list).sort();
      return names.length > 0 ? [`    ${`${label}:`.padEnd(11)} ${names.map((name) => `${name}=${list[name]}`).join(", ")}`] : [];
    });
    const probes = PROBE_LINES.flatMap(([label, pick]) => {
      const probe = pick(container);
      return probe ? [`    ${`${label}:`.padEnd(11)} ${describeProbe(probe)}`] : [];
    });
    // A container's own policy overrides the pod's (KEP-5307); a sidecar's Always is already shown as "(sidecar)".
    const restart =
      container.restartPolicy && !(pod.initContainers.includes(container) && isSidecar(container))
        ? [`    ${"Restart:".padEnd(11)} ${container.restartPolicy}${container.restartPolicyRules ? `, restartPolicyRules: ${container.restartPolicyRules.map(ruleText).join(", ")}` : ""}`]
        : [];
    if (resources.length + probes.length + restart.length > 0) lines.push(`  ${container.name}:`, ...restart, ...resources, ...probes);
  }
  return `${lines.join("\n")}\n`;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
