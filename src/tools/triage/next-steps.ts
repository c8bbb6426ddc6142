/**
 * The runbook's last page: the commands that show what triage read (the log of the attempt that
 * ended, describe, the attempts and events as SQL), then what to change. Pure: the SQL text comes
 * from src/store/triage-queries.ts, where SQL lives.
 */
import { attemptsQuery, backoffQuery, eventsQuery } from "../../store/triage-queries.ts";
import type { EndedAttempt } from "./ended-attempt.ts";
import type { ExitCause } from "./exit-cause.ts";
import type { ContainerFacts, TriageFacts } from "./facts.ts";
import { blockingInit } from "./pick-container.ts";
import type { NextStep, TriageReport } from "./report.ts";

/** A word the shell passes through as is, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

export function nextSteps(
  facts: TriageFacts,
  container: ContainerFacts,
  found: { ended?: EndedAttempt; exitCause?: ExitCause; cause: TriageReport["verdict"]["cause"] },
): NextStep[] {
  const pod = `${shellWord(facts.pod.name)} -n ${shellWord(facts.pod.namespace)}`;
  const flags = facts.commandFlags;
  const c = shellWord(container.name);
  const steps: NextStep[] = [];
  const { ended, exitCause } = found;
  // A deleted pod's containers, and their output, went with it.
  if (ended?.attempt && ended.attempt.runtimeId !== "" && exitCause?.endedBy !== "never-started" && facts.pod.deletedAt === undefined) {
    const previous = ended.source === "lastState" ? " --previous" : "";
    steps.push({ command: `minikubelet logs ${pod} -c ${c}${previous}${flags}`, text: `the whole output of attempt ${ended.attempt.attempt}, the one that exited ${ended.termination.exitCode}` });
  }
  if (found.cause === "init-running") steps.push({ command: `minikubelet logs ${pod} -c ${c}${flags}`, text: "what the init container is doing (or waiting for)" });
  if (found.cause === "waiting-for-init") {
    const init = blockingInit(facts.containers, facts.pod.initialized);
    if (init) steps.push({ command: `minikubelet triage ${pod} -c ${shellWord(init.name)}${flags}`, text: `the init container the pod waits for` });
  }
  steps.push({ command: `minikubelet describe pod ${pod}${flags}`, text: "state, last state, probes and every attempt, as kubectl describe shows them" });
  steps.push({ command: `minikubelet sql ${JSON.stringify(attemptsQuery(facts.pod.uid, container.name))}${flags}`, text: "the attempts this report used" });
  steps.push({ command: `minikubelet sql ${JSON.stringify(eventsQuery(facts.pod.uid, container.name))}${flags}`, text: "the events this report used (the container's and the pod's)" });
  if (container.backoff) steps.push({ command: `minikubelet sql ${JSON.stringify(backoffQuery(facts.pod.uid, container.name))}${flags}`, text: "the restart back-off as the agent last recorded it" });
  const change = changeAdvice(found, container);
  if (change) steps.push({ text: `Change: ${change}` });
  return steps;
}

function changeAdvice(found: { exitCause?: ExitCause; cause: TriageReport["verdict"]["cause"] }, container: ContainerFacts): string | undefined {
  if (found.exitCause) return found.exitCause.change;
  switch (found.cause) {
    case "image-pull":
      return `make ${container.image} pullable: fix the name or tag, the registry's reachability or the pull credentials (imagePullPolicy Never needs it on the node already).`;
    case "readiness-failing":
      return "fix the readiness endpoint or what it depends on; do not turn it into a liveness probe, which would restart a process that is only waiting.";
    default:
      return undefined;
  }
}
