/**
 * The line a timeline adds under a container with a restart policy of its own (KEP-5307): which of
 * its restarts its rules made, and, once it has stopped for good, what kept it down. A container
 * that follows the pod's policy, and a sidecar, get none: the pod's policy explains them.
 */
import { restartDecision, ruleText } from "../../kubelet/restart-policy.ts";
import type { ContainerSpec, RestartPolicy } from "../../manifest/types.ts";
import type { ContainerKind } from "../../runtime/runtime.ts";
import type { TimelineAttempt } from "./model.ts";

export interface RestartNoteInput {
  name: string;
  kind: ContainerKind;
  spec: Pick<ContainerSpec, "restartPolicy" | "restartPolicyRules">;
  podPolicy: RestartPolicy;
  /** Oldest first, as the timeline holds them. */
  attempts: readonly TimelineAttempt[];
  waitingNow: boolean;
}

export function restartNote(input: RestartNoteInput): string | undefined {
  const { spec, podPolicy } = input;
  if (input.kind === "sidecar" || input.kind === "ephemeral" || spec.restartPolicy === undefined) return undefined;
  const rules = spec.restartPolicyRules ?? [];
  const byRule = new Map<number, number>();
  const finished = input.attempts.filter((a) => a.finishedAt !== undefined && a.exitCode !== undefined);
  for (const [i, attempt] of finished.entries()) {
    // An attempt restarted is one followed by another, or the last while it waits for its back-off.
    const restarted = i < finished.length - 1 || input.attempts.at(-1) !== attempt || input.waitingNow;
    const { decider } = restartDecision(podPolicy, input.kind, spec, attempt.exitCode!);
    if (restarted && decider.by === "rule") byRule.set(decider.index, (byRule.get(decider.index) ?? 0) + 1);
  }
  const parts = [...byRule].map(([index, count]) => `${count} ${count === 1 ? "restart" : "restarts"} by restartPolicyRules[${index}] (${ruleText(rules[index]!)})`);
  const last = input.attempts.at(-1);
  if (last?.finishedAt !== undefined && last.exitCode !== undefined && !input.waitingNow) {
    const decision = restartDecision(podPolicy, input.kind, spec, last.exitCode);
    const success = input.kind === "init" && last.exitCode === 0;
    if (!decision.restart && !success) {
      const why = rules.length > 0 ? `it matches no rule and the container's restartPolicy is ${spec.restartPolicy}` : `the container's restartPolicy is ${spec.restartPolicy}`;
      parts.push(`not restarted after exit ${last.exitCode}: ${why}`);
    }
  }
  if (parts.length === 0) return undefined;
  return `${input.name}: ${parts.join("; ")} (the pod's restartPolicy is ${podPolicy})`;
}
