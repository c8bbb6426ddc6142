/**
 * What our own records say about how an attempt ended, besides its exit code: did a probe have it
 * killed, did the agent stop it, did the grace period run out. Read from the container's events in
 * the attempt's window (start to exit). Events are kept with repeat counting (first and last time
 * only), so an occurrence is tied to the window by one of those two times, or by spanning it.
 */
import type { EventFact } from "./facts.ts";

export interface Window {
  startedAt: number;
  finishedAt: number;
}

/** An event row that happened during the window: `spans` when only its first and last time bracket it. */
export interface WindowEvent {
  event: EventFact;
  spans: boolean;
}

export interface StopFacts {
  /** A Killing for a failed liveness or startup probe. */
  probeKill?: { probe: "liveness" | "startup"; killing: WindowEvent; unhealthy: WindowEvent[] };
  /** A Killing by the agent for another reason (pod removed, replaced, agent stopping with its pods). */
  agentStop?: WindowEvent;
  /** SIGTERM was not enough: the grace period ran out and SIGKILL followed. */
  graceExpired?: WindowEvent;
  /**
   * Killing or GraceExpired rows whose first and last times bracket the window: they may have
   * happened during it or not, and are not taken as a cause (never guessed), only reported.
   */
  uncertain: WindowEvent[];
  /**
   * The Killing row taken from `uncertain` by deduction: a GraceExpired inside the window means the
   * agent was stopping the attempt, so a Killing fell inside it too, and this row is the only one
   * that can hold it.
   */
  deduced?: WindowEvent;
}

export function eventsDuring(events: readonly EventFact[], window: Window): WindowEvent[] {
  const inside = (at: number) => at >= window.startedAt && at <= window.finishedAt;
  const found: WindowEvent[] = [];
  for (const event of events) {
    if (inside(event.lastAt) || inside(event.firstAt)) found.push({ event, spans: false });
    else if (event.count > 1 && event.firstAt < window.startedAt && event.lastAt > window.finishedAt) found.push({ event, spans: true });
  }
  return found;
}

const PROBE_KILL = /failed (liveness|startup) probe/;

export function stopsDuring(events: readonly EventFact[], window: Window): StopFacts {
  const during = eventsDuring(events, window);
  const stops: StopFacts = { uncertain: [] };
  for (const found of during) {
    const { reason } = found.event;
    if (found.spans) {
      if (reason === "Killing" || reason === "GraceExpired") stops.uncertain.push(found);
      continue;
    }
    if (reason === "Killing") {
      classifyKilling(stops, found, during);
    } else if (reason === "GraceExpired") {
      stops.graceExpired ??= found;
    }
  }
  const killings = stops.uncertain.filter((found) => found.event.reason === "Killing");
  if (stops.graceExpired && !stops.probeKill && !stops.agentStop && killings.length === 1) {
    stops.deduced = killings[0]!;
    stops.uncertain = stops.uncertain.filter((found) => found !== stops.deduced);
    classifyKilling(stops, stops.deduced, during);
  }
  return stops;
}

function classifyKilling(stops: StopFacts, found: WindowEvent, during: WindowEvent[]): void {
  const probe = PROBE_KILL.exec(found.event.message)?.[1] as "liveness" | "startup" | undefined;
  if (!probe) {
    stops.agentStop ??= found;
    return;
  }
  const label = probe === "liveness" ? "Liveness" : "Startup";
  const unhealthy = during.filter((e) => e.event.reason === "Unhealthy" && e.event.message.startsWith(`${label} probe`));
  stops.probeKill ??= { probe, killing: found, unhealthy };
}
