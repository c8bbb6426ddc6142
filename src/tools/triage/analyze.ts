/**
 * The triage runbook as a pure function: facts in (facts.ts), findings out (report.ts). It reads
 * lastState first, then the attempt history, the events in the ended attempt's window and the
 * previous attempt's log, and says why the container is down, who ended it, when the back-off lets
 * it start again, and what to run and change next. No I/O, no clock: `facts.now` is the present.
 */
import { goDuration } from "../../printers/go-duration.ts";
import { backoffOutlook, capText } from "./backoff-outlook.ts";
import { endedAttempt, type EndedAttempt } from "./ended-attempt.ts";
import { explainExit, type ExitCause } from "./exit-cause.ts";
import type { ContainerFacts, TriageFacts } from "./facts.ts";
import { nextSteps } from "./next-steps.ts";
import { decisionFor, restartRuleLine } from "./restart-text.ts";
import { blockingInit, pickContainer } from "./pick-container.ts";
import type { Evidence, Role, StateCause, TriageReport } from "./report.ts";
import { eventsDuring, stopsDuring, type StopFacts } from "./stops.ts";
import { attemptEvidence, eventText, iso, stateText } from "./evidence.ts";

const PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"]);

export function analyze(facts: TriageFacts): TriageReport {
  const container = facts.containers.find((c) => c.name === facts.container);
  if (!container) throw new Error(`triage: no container ${facts.container} in the facts`);
  const status = container.status;
  const blocking = blockingInit(facts.containers, facts.pod.initialized);
  const role: Role = container.kind === "app" ? "app" : container.kind === "sidecar" ? "sidecar" : blocking === container ? "init-blocking" : "init";
  const evidence: Evidence[] = [];
  const ended = endedAttempt(container);
  if (ended) evidence.push(terminationEvidence(ended));
  if (status?.state && !status.state.terminated) evidence.push({ source: "state", text: `state: ${stateText(status.state)}` });
  evidence.push(...attemptEvidence(container.attempts));

  const waiting = status?.state?.waiting;
  let verdict: TriageReport["verdict"];
  let exitCause: ExitCause | undefined;
  if (waiting?.reason && PULL_REASONS.has(waiting.reason)) {
    verdict = imagePullVerdict(container, waiting.reason, waiting.message);
    for (const event of container.events) if (event.reason === "Failed" || (event.reason === "BackOff" && event.message.startsWith("Back-off pulling"))) evidence.push(eventEvidence(event));
  } else if (ended) {
    const window = attemptWindow(container, ended, facts.now);
    const stops: StopFacts = window ? stopsDuring(container.events, window) : { uncertain: [] };
    exitCause = explainExit(ended.termination, stops, { kind: container.kind, restartPolicy: facts.pod.restartPolicy, own: container });
    const ruleLine = restartRuleLine(container, facts.pod.restartPolicy, ended.termination.exitCode);
    verdict = {
      cause: exitCause.cause,
      endedBy: exitCause.endedBy,
      summary: framed(role, container, facts, exitCause.title),
      details: [crashOrKill(exitCause, stops, ended), ...(ruleLine ? [ruleLine] : []), ...(stops.deduced ? [deduction(stops.deduced)] : []), ...stops.uncertain.map(uncertainty)],
    };
    if (window) {
      for (const found of eventsDuring(container.events, window)) if (telling(found.event)) evidence.push(eventEvidence(found.event, found.spans));
    } else {
      evidence.push({ source: "attempts", text: "the ended attempt's start or finish is not recorded: its events cannot be placed" });
    }
    if (status?.state?.running && ended.source === "lastState") verdict.details.push(`It runs again now (restart ${status.restartCount}): this verdict is about the attempt before.`);
    pushBackOffEvent(container, evidence);
    if (exitCause.endedBy !== "never-started") evidence.push(...logEvidence(facts, ended));
  } else {
    verdict = stateVerdict(container, facts, blocking);
    for (const event of [...facts.podEvents, ...container.events]) if (event.type === "Warning") evidence.push(eventEvidence(event));
  }
  pushBackOffEvent(container, evidence);

  if (facts.pod.deletedAt !== undefined) verdict.details.push(`The pod was deleted at ${iso(facts.pod.deletedAt)}; this is its last record, and nothing will restart it.`);
  const others = pickContainer(facts.containers, facts.pod.initialized).inTrouble.filter((name) => name !== container.name);
  return {
    pod: { namespace: facts.pod.namespace, name: facts.pod.name, phase: facts.pod.phase, status: facts.pod.statusColumn, restartPolicy: facts.pod.restartPolicy },
    container: { name: container.name, kind: container.kind, role, restartCount: status?.restartCount ?? 0, state: status?.state ? stateText(status.state, true) : "no status reported yet" },
    verdict,
    ...(ended && {
      exit: {
        attempt: ended.attempt?.attempt,
        exitCode: ended.termination.exitCode,
        signal: ended.termination.signal,
        reason: ended.termination.reason,
        startedAt: ended.startedAt,
        finishedAt: ended.finishedAt,
      },
    }),
    evidence,
    ...(ended && willRestart(container, facts, ended) && { backoff: backoffSection(container, facts, ended) }),
    nextSteps: nextSteps(facts, container, { ended, exitCause, cause: verdict.cause }),
    alsoInTrouble: others.map((name) => {
      const other = facts.containers.find((c) => c.name === name)!;
      return `${name} (${other.status?.state ? stateText(other.status.state, true) : "no status"})`;
    }),
  };
}

/**
 * The ended attempt's events are those from its start until the next attempt's start (or now): the
 * agent records the exit (Exited, BackOff) a moment after the runtime's finish time, and nothing of
 * the next attempt can happen before it starts. Inclusive, since a restart can share the exit's millisecond.
 */
function attemptWindow(container: ContainerFacts, ended: EndedAttempt, now: number): { startedAt: number; finishedAt: number } | undefined {
  if (ended.startedAt === undefined || ended.finishedAt === undefined) return undefined;
  const number = ended.attempt?.attempt;
  const next = number === undefined ? undefined : container.attempts.find((a) => a.attempt === number + 1)?.startedAt;
  return { startedAt: ended.startedAt, finishedAt: Math.max(ended.finishedAt, next ?? now) };
}

function deduction(found: { event: ContainerFacts["events"][number] }): string {
  const { count, firstAt, lastAt, message } = found.event;
  return `Deduced: GraceExpired fell inside this attempt, so the agent was stopping it, and the only Killing row that can have an occurrence inside it is "${message}" (x${count}, ${iso(firstAt)} to ${iso(lastAt)}).`;
}

function uncertainty(found: { event: ContainerFacts["events"][number] }): string {
  const { reason, count, firstAt, lastAt } = found.event;
  return `Uncertain: the ${reason} row (x${count}, ${iso(firstAt)} to ${iso(lastAt)}) brackets this attempt, and the store keeps only a row's first and last time: it may also have happened during it, so it was not taken as the cause.`;
}

/** The crash loop's BackOff row, once, wherever it happened. */
function pushBackOffEvent(container: ContainerFacts, evidence: Evidence[]): void {
  const backOff = container.events.find((e) => e.reason === "BackOff" && e.message.startsWith("Back-off restarting"));
  if (backOff && !evidence.some((e) => e.text.startsWith(eventText(backOff)))) evidence.push(eventEvidence(backOff));
}

/** Events that say something about how an attempt went; Created, Started and pulls only mark its start. */
function telling(event: ContainerFacts["events"][number]): boolean {
  return event.type === "Warning" || event.reason === "Killing";
}

function terminationEvidence(ended: EndedAttempt): Evidence {
  const t = ended.termination;
  const field = ended.source === "state" ? "state.terminated" : "lastState.terminated";
  const attempt = ended.attempt ? ` (attempt ${ended.attempt.attempt})` : "";
  const signal = t.signal !== undefined ? `, signal ${t.signal}` : "";
  const ran = t.ranMs !== undefined ? `, ran ${goDuration(t.ranMs)}` : "";
  const message = t.message ? `: ${t.message}` : "";
  return { at: ended.finishedAt, source: ended.source, text: `${field}${attempt}: exit code ${t.exitCode} (${t.reason ?? "no reason"})${signal}${ran}${message}` };
}

function eventEvidence(event: ContainerFacts["events"][number], spans = false): Evidence {
  const note = spans ? " (its first and last time bracket this attempt: the store keeps only those two)" : "";
  return { at: event.lastAt, source: "event", text: `${eventText(event)}${note}` };
}

function logEvidence(facts: TriageFacts, ended: EndedAttempt): Evidence[] {
  const log = facts.previousLog;
  if (!log || log.attempt !== ended.attempt?.attempt) return [];
  if ("unavailable" in log) return [{ source: "log", text: `log of attempt ${log.attempt}: ${log.unavailable}` }];
  if (log.lines.length === 0) return [{ source: "log", text: `log of attempt ${log.attempt}: empty (it wrote nothing)` }];
  return log.lines.map((line) => ({ source: "log" as const, text: `log of attempt ${log.attempt} | ${line}` }));
}

/** Puts the exit's title in its place in the pod: a blocking init container, a sidecar, an app container. */
function framed(role: Role, container: ContainerFacts, facts: TriageFacts, title: string): string {
  switch (role) {
    case "init-blocking":
      return container.status?.state?.terminated && !decisionFor(container, facts.pod.restartPolicy, container.status.state.terminated.exitCode).restart
        ? `Init container ${container.name} failed and the pod has failed (${container.restartPolicy === undefined ? "restartPolicy" : "its restartPolicy"} ${container.restartPolicy ?? facts.pod.restartPolicy}): ${title}`
        : `Init container ${container.name} blocks the pod (${facts.pod.statusColumn}): the app containers wait until it exits 0. ${title}`;
    case "sidecar": {
      const holds = blockingInit(facts.containers, facts.pod.initialized) === container ? "; the containers after it wait until it runs" : "";
      return `Sidecar ${container.name} (a restartable init container) keeps restarting${holds}: ${title}`;
    }
    case "init":
    case "app":
      return title;
  }
}

/** The line that tells a crashing process from a probe killing a running one. */
function crashOrKill(cause: ExitCause, stops: StopFacts, ended: EndedAttempt): string {
  // The change to make is a next step (next-steps.ts); this line says who ended the attempt.
  switch (cause.endedBy) {
    case "probe": {
      const kill = stops.probeKill!;
      // A row's count covers every attempt it repeated in; it is this attempt's only when the row lies inside it.
      const inside = kill.unhealthy.every((found) => found.event.firstAt >= ended.startedAt! && !found.spans);
      const failures = inside ? kill.unhealthy.reduce((sum, found) => sum + found.event.count, 0) : 0;
      const ranFor = ended.termination.ranMs !== undefined ? ` for ${goDuration(ended.termination.ranMs)}` : "";
      return `Not a crash: the process was running${ranFor} when the ${kill.probe} probe failed${failures ? ` (Unhealthy x${failures})` : ""} and the agent killed it (Killing before the exit).`;
    }
    case "itself":
      return `${cause.cause.startsWith("completed") ? "It ended on its own" : "A crash, not a probe"}: no Killing event between its start and its exit, so nothing of ours stopped it.`;
    case "agent":
      return "The agent stopped it (Killing before the exit): not a crash.";
    case "outside":
      return "Nothing of ours stopped it: no Killing and no GraceExpired event between its start and its exit.";
    case "runtime":
      return "The runtime ended it, as its recorded reason says; no probe or stop of ours came before the exit.";
    case "never-started":
      return "The process never ran: the runtime refused to create or start it.";
  }
}

function imagePullVerdict(container: ContainerFacts, reason: string, message: string | undefined): TriageReport["verdict"] {
  return {
    cause: "image-pull",
    endedBy: "never-started",
    summary: `The image ${container.image} cannot be pulled (${reason})${message ? `: ${message}` : ""}`,
    details: ["The container has never run with this image, so it has no log: the Failed events say why the pull failed."],
  };
}

function stateVerdict(container: ContainerFacts, facts: TriageFacts, blocking: ContainerFacts | undefined): TriageReport["verdict"] {
  const state = container.status?.state;
  let cause: StateCause = "healthy";
  let summary = `No trouble found: ${container.name} is ${state ? stateText(state) : "not reported yet"}, with no restarts`;
  const details: string[] = [];
  if (blocking === container && container.kind === "init" && state?.running) {
    cause = "init-running";
    const since = container.attempts.at(-1)?.startedAt ?? undefined;
    summary = `Init container ${container.name} is still running${since !== undefined ? ` (since ${iso(since)}, ${goDuration(facts.now - since)})` : ""}: the pod waits until it exits 0 (${facts.pod.statusColumn})`;
    details.push("An init container that never exits (a loop waiting for a dependency) holds the pod in Init; its log says what it waits for.");
  } else if (container.kind === "app" && blocking && !state?.running) {
    cause = "waiting-for-init";
    summary = `${container.name} has not started: it waits for init container ${blocking.name} (run triage -c ${blocking.name})`;
  } else if (!state || state.waiting) {
    cause = "not-started";
    summary = `${container.name} has not started yet (${state?.waiting?.reason ?? "no status"}${state?.waiting?.message ? `: ${state.waiting.message}` : ""})`;
  } else if (state.running && !container.status!.ready && container.probes.readiness) {
    const failing = container.events.some((e) => e.reason === "Unhealthy" && e.message.startsWith("Readiness"));
    if (failing) {
      cause = "readiness-failing";
      summary = `${container.name} runs but is not ready: its readiness probe fails. Readiness only takes it out of service, it never restarts it`;
    }
  }
  return { cause, summary, details };
}

/** Whether the agent will start the container again after the ended attempt. */
function willRestart(container: ContainerFacts, facts: TriageFacts, ended: EndedAttempt): boolean {
  if (facts.pod.deletedAt !== undefined) return false;
  return decisionFor(container, facts.pod.restartPolicy, ended.termination.exitCode).restart;
}

function backoffSection(container: ContainerFacts, facts: TriageFacts, ended: EndedAttempt): NonNullable<TriageReport["backoff"]> {
  const finishedAt = ended.finishedAt ?? facts.now;
  const outlook = backoffOutlook(container.backoff, finishedAt, facts.backoffSettings);
  const lines: string[] = [];
  const state = container.status?.state;
  const reset = `The back-off resets after ${goDuration(outlook.resetAfterMs)} of clean running (${capText(facts.backoffSettings, facts.backoffSource)})`;
  if (state?.running) {
    // The question is what a crash now would cost: the entry as of now, raised at the last restart.
    const now = backoffOutlook(container.backoff, facts.now, facts.backoffSettings);
    const since = container.backoff?.updatedAt;
    lines.push(`Running again since its last restart${since !== undefined ? ` ${goDuration(facts.now - since)} ago` : ""}.`);
    if (now.resetAt !== undefined) lines.push(`${reset}: a crash before ${iso(now.resetAt)} waits ${goDuration(now.waitMs)}; after it, the restart is immediate.`);
    else lines.push(`${reset}. ${container.backoff ? "It has run that long" : "No back-off is recorded"}: a crash now restarts at once.`);
    return { ...now, lines };
  }
  if (outlook.waitMs === 0) {
    lines.push(container.backoff ? `The recorded back-off has expired (its last restart was more than ${goDuration(outlook.resetAfterMs)} before the finish): the next start is immediate.` : "No back-off is recorded for it: the next start is immediate (a first crash restarts at once).");
  } else {
    const left = outlook.nextStartAt - facts.now;
    const when = left > 0 ? `in ${goDuration(Math.ceil(left / 1000) * 1000)}` : "now: due on the agent's next pass";
    lines.push(`Next start allowed at ${iso(outlook.nextStartAt)} (${when}): the back-off waits ${goDuration(outlook.waitMs)} from the finish at ${iso(finishedAt)}.`);
    lines.push(`If it crashes again as quickly, the wait after that is ${goDuration(outlook.nextWaitMs)}.`);
  }
  lines.push(outlook.resetAt !== undefined ? `${reset}: an attempt that runs until ${iso(outlook.resetAt)} or later makes the next restart immediate.` : `${reset}.`);
  return { ...outlook, lines };
}
