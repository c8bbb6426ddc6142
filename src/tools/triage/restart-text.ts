/**
 * What triage says about a container's own restart policy and rules (KEP-5307): which rule or
 * policy decided the ended attempt's fate, in the kubelet's order (restart-policy.ts). A
 * container that has no policy of its own follows the pod's, which the headline already names.
 */
import { restartDecision, ruleText, type RestartDecision } from "../../kubelet/restart-policy.ts";
import type { ContainerFacts, PodFacts } from "./facts.ts";

/** The decision for `exitCode`, the same one the loop made. An init container that exited 0 is done, never restarted. */
export function decisionFor(container: ContainerFacts, podPolicy: PodFacts["restartPolicy"], exitCode: number): RestartDecision {
  const decision = restartDecision(podPolicy, container.kind, container, exitCode);
  return container.kind === "init" && exitCode === 0 ? { ...decision, restart: false } : decision;
}

/**
 * One line naming what decided, for a container with a policy of its own; undefined otherwise
 * (the pod's policy, or a sidecar, which restarts whatever it says).
 */
export function restartRuleLine(container: ContainerFacts, podPolicy: PodFacts["restartPolicy"], exitCode: number): string | undefined {
  if (container.kind === "sidecar" || container.restartPolicy === undefined) return undefined;
  if (container.kind === "init" && exitCode === 0) return undefined;
  const decision = decisionFor(container, podPolicy, exitCode);
  const { decider } = decision;
  switch (decider.by) {
    case "rule":
      return `Restarts because exit code ${exitCode} matches restartPolicyRules[${decider.index}] (${ruleText(decider.rule)}), whatever the restartPolicy (the container's ${container.restartPolicy}, the pod's ${podPolicy}).`;
    case "container": {
      const verdict = decision.restart ? "Restarts" : "Not restarted";
      const rules = container.restartPolicyRules ?? [];
      return rules.length > 0
        ? `${verdict}: exit ${exitCode} matches no rule (${rules.map(ruleText).join(", ")}) and the container's restartPolicy is ${decider.policy}.`
        : `${verdict}: the container's own restartPolicy ${decider.policy} applies to exit ${exitCode}, not the pod's ${podPolicy}.`;
    }
    case "pod":
    case "sidecar":
      return undefined;
  }
}
