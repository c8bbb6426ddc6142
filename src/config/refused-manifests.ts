/**
 * Manifest files the file source refused, and fields it accepted with a warning, as the user sees
 * them: Warning events (reasons `FailedToParse`, `Invalid`, `UnknownField`, `UnsupportedField`) and
 * the record `get pods` lists as STATUS Invalid. The kubelet only logs a bad static pod file; here
 * it is visible where the user already looks.
 */
import { formatIssue, type Issue } from "../manifest/errors.ts";
import { podUid } from "../manifest/hash.ts";
import type { SourceError } from "../manifest/source.ts";
import type { PodKey, PodSpec } from "../manifest/types.ts";
import type { KubeEvent } from "../v1/kube-event.ts";

/** A refused file with what the store and the events need to show it. */
export interface RefusedManifest extends SourceError {
  /** Stable for the node and the file, whatever its content: one row and one event history per file. */
  uid: string;
  /** The pod that ran from this file until it turned bad: the loop stops it, as for a removed file. */
  stopped?: PodKey;
}

export function refusedManifestUid(node: string, file: string): string {
  return podUid(node, file, { refusedManifest: true });
}

/** `FailedToParse` or `Invalid`, naming the file, every problem, and the pod it stopped. */
export function refusedManifestEvent(refused: RefusedManifest, at: number): KubeEvent {
  const what = refused.reason === "FailedToParse" ? "could not be parsed" : "is invalid";
  const problems = refused.issues.map(formatIssue).join("; ");
  const stopped = refused.stopped ? `; pod ${refused.stopped}, which ran from it, is stopped as when its file is removed` : "";
  return {
    at,
    type: "Warning",
    reason: refused.reason,
    podKey: `${refused.namespace}/${refused.name}`,
    namespace: refused.namespace,
    pod: refused.name,
    podUid: refused.uid,
    container: "",
    message: `manifest ${refused.file} ${what}, not run until it is fixed: ${problems}${stopped}`,
  };
}

/** One Warning per field that will not take effect: `UnknownField` or `UnsupportedField`. */
export function fieldWarningEvents(pod: PodSpec, issues: readonly Issue[], at: number): KubeEvent[] {
  return issues.map((issue) => ({
    at,
    type: "Warning",
    reason: issue.unknownField ? "UnknownField" : "UnsupportedField",
    podKey: pod.key,
    namespace: pod.namespace,
    pod: pod.fullName,
    podUid: pod.uid,
    container: containerAt(pod, issue),
    message: issue.unknownField ? `${formatIssue(issue)} in ${pod.source}: ignored, the pod runs without it` : formatIssue(issue),
  }));
}

function containerAt(pod: PodSpec, issue: Issue): string {
  const [spec, list, index] = issue.path;
  if (spec !== "spec" || typeof index !== "number") return "";
  if (list === "containers") return pod.containers[index]?.name ?? "";
  if (list === "initContainers") return pod.initContainers[index]?.name ?? "";
  return "";
}
