/**
 * Whether an exited container starts again, by the kubelet's rule (ContainerShouldRestart in
 * pkg/api/v1/pod/util.go, 1.35): the container's restartPolicyRules in order, the first that
 * matches the exit code decides; else the container's own restartPolicy; else the pod's. A sidecar
 * restarts whatever the policies say (KEP-753). The decision says which of these made it, for the
 * loop and for triage to tell the same story.
 */
import type { ContainerRestartRule, ContainerSpec, RestartPolicy } from "../manifest/types.ts";
import type { ContainerKind } from "../runtime/runtime.ts";
import type { ContainerRecord } from "./pod-state.ts";

/** What decided: a rule (its index in restartPolicyRules), the container's policy, the pod's, or being a sidecar. */
export type RestartDecider =
  | { by: "sidecar" }
  | { by: "rule"; index: number; rule: ContainerRestartRule }
  | { by: "container"; policy: RestartPolicy }
  | { by: "pod"; policy: RestartPolicy };

export interface RestartDecision {
  restart: boolean;
  decider: RestartDecider;
}

type RestartSpec = Pick<ContainerSpec, "restartPolicy" | "restartPolicyRules">;

/** Always restarts every exit, OnFailure only a non-zero one, Never none. */
export function shouldRestart(policy: RestartPolicy, exitCode: number): boolean {
  switch (policy) {
    case "Always":
      return true;
    case "OnFailure":
      return exitCode !== 0;
    case "Never":
      return false;
  }
}

/** In: the code is one of the values; NotIn: it is none of them (an empty NotIn matches every code). */
export function ruleMatches(rule: ContainerRestartRule, exitCode: number): boolean {
  const listed = rule.exitCodes.values.includes(exitCode);
  return rule.exitCodes.operator === "In" ? listed : !listed;
}

/** A rule as the reports print it: `In [42]`, `NotIn [0, 1]`. */
export function ruleText(rule: ContainerRestartRule): string {
  return `${rule.exitCodes.operator} [${rule.exitCodes.values.join(", ")}]`;
}

/** The index of the first rule matching `exitCode`, or -1. */
export function matchingRule(spec: RestartSpec, exitCode: number): number {
  return (spec.restartPolicyRules ?? []).findIndex((rule) => ruleMatches(rule, exitCode));
}

/**
 * The decision for one exit. Rules count only beside the container's own policy (the API server
 * requires it, and the kubelet reads rules only when it is set).
 */
export function restartDecision(podPolicy: RestartPolicy, kind: ContainerKind, spec: RestartSpec, exitCode: number): RestartDecision {
  if (kind === "sidecar") return { restart: true, decider: { by: "sidecar" } };
  if (spec.restartPolicy !== undefined) {
    const index = matchingRule(spec, exitCode);
    const rule = spec.restartPolicyRules?.[index];
    // Restart is 1.35's one action: a matching rule restarts.
    if (rule) return { restart: true, decider: { by: "rule", index, rule } };
    return { restart: shouldRestart(spec.restartPolicy, exitCode), decider: { by: "container", policy: spec.restartPolicy } };
  }
  return { restart: shouldRestart(podPolicy, exitCode), decider: { by: "pod", policy: podPolicy } };
}

export function containerShouldRestart(podPolicy: RestartPolicy, container: Pick<ContainerRecord, "kind" | "spec">, exitCode: number): boolean {
  return restartDecision(podPolicy, container.kind, container.spec, exitCode).restart;
}

/**
 * Whether some exit could restart the container (the kubelet's IsContainerRestartable): a rule
 * that restarts, or a policy other than Never. A pod under Never with one such container still
 * needs its sandbox.
 */
export function isContainerRestartable(podPolicy: RestartPolicy, container: Pick<ContainerRecord, "kind" | "spec">): boolean {
  if (container.kind === "sidecar") return true;
  const { restartPolicy, restartPolicyRules } = container.spec;
  if (restartPolicy === undefined) return podPolicy !== "Never";
  return (restartPolicyRules ?? []).length > 0 || restartPolicy !== "Never";
}

/**
 * Whether a running container killed by its liveness or startup probe is to start again, as
 * computePodActions decides at the kill: no exit code yet, so no rule is read, only the
 * container's own policy (anything but Never restarts), else the pod's. The exit that follows is
 * then decided by restartDecision like any other; this only words the Killing event.
 */
export function restartsAfterProbeKill(podPolicy: RestartPolicy, container: Pick<ContainerRecord, "kind" | "spec">): boolean {
  if (container.kind === "sidecar") return true;
  return (container.spec.restartPolicy ?? podPolicy) !== "Never";
}
