/**
 * `minikubelet validate DIR [--node NAME]`: loads the directory exactly as `run` would and prints
 * each pod with its containers and probes (each probe as `kubectl describe pod` prints it), then
 * every refused file as one line on stderr. Exit 1 when any file is refused or DIR is unusable.
 */
import type { ContainerSpec, PodSpec, Probe } from "../manifest/types.ts";
import { isSidecar } from "../manifest/types.ts";
import { describeProbe } from "../manifest/describe-probe.ts";
import { ManifestSourceError } from "../manifest/errors.ts";
import { loadManifests } from "../manifest/source.ts";
import { nodeOption } from "./options.ts";

export interface ValidateCommandOptions {
  /** cac turns a numeric-looking value into a number, hence unknown. */
  node?: unknown;
}

/** Where the command writes; tests pass their own. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: CommandOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

/** kubectl describe's order and labels for the three probes. */
const PROBE_LINES: readonly [label: string, pick: (container: ContainerSpec) => Probe | undefined][] = [
  ["Liveness", (container) => container.livenessProbe],
  ["Readiness", (container) => container.readinessProbe],
  ["Startup", (container) => container.startupProbe],
];

export function validateCommand(dir: string, options: ValidateCommandOptions, output: CommandOutput = processOutput): number {
  const node = nodeOption(options.node);
  let result: ReturnType<typeof loadManifests>;
  try {
    result = loadManifests(dir, node);
  } catch (error) {
    if (!(error instanceof ManifestSourceError)) throw error;
    output.err(`error: ${error.message}\n`);
    return 1;
  }
  const pods = [...result.pods.values()];
  output.out(pods.map(formatPod).join(""));
  for (const error of result.errors) output.err(`${error.message}\n`);
  output.out(`${plural(pods.length, "pod")} valid, ${plural(result.errors.length, "file")} refused\n`);
  return result.errors.length > 0 ? 1 : 0;
}

/** One pod: identity, restart policy, containers, and a describe line per probe. */
export function formatPod(pod: PodSpec): string {
  const file = pod.source.slice(pod.source.lastIndexOf("/") + 1);
  const lines = [
    `Pod ${pod.fullName} (${file})`,
    `  Namespace:        ${pod.namespace}`,
    `  Restart Policy:   ${pod.restartPolicy}`,
    `  Init Containers:  ${pod.initContainers.map((c) => (isSidecar(c) ? `${c.name} (sidecar)` : c.name)).join(", ") || "<none>"}`,
    `  Containers:       ${pod.containers.map((c) => c.name).join(", ")}`,
  ];
  for (const container of [...pod.initContainers, ...pod.containers]) {
    const probes = PROBE_LINES.flatMap(([label, pick]) => {
      const probe = pick(container);
      return probe ? [`    ${`${label}:`.padEnd(11)} ${describeProbe(probe)}`] : [];
    });
    if (probes.length > 0) lines.push(`  ${container.name}:`, ...probes);
  }
  return `${lines.join("\n")}\n`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
