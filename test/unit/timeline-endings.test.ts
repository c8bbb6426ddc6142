import { describe, expect, test } from "bun:test";
import { timelineContainers, type ContainerHistory } from "../../src/tools/timeline/endings.ts";
import type { AttemptRow, EventRow } from "../../src/store/queries.ts";

const S = 1000;

function attemptRow(attempt: number, startS: number | null, endS: number | null, exitCode: number | null, reason: string | null = null): AttemptRow {
  return {
    podUid: "uid",
    container: "web",
    attempt,
    runtimeId: `web-${attempt}`,
    startedAt: startS === null ? null : startS * S,
    finishedAt: endS === null ? null : endS * S,
    exitCode,
    reason: reason ?? (exitCode === null ? null : exitCode === 0 ? "Completed" : "Error"),
    signal: null,
    logPath: null,
  };
}

function event(reason: string, message: string, firstS: number, lastS = firstS, count = 1): EventRow {
  return {
    id: 0, podUid: "uid", namespace: "demo", pod: "web-lab", container: "web", type: "Normal",
    reason, message, count, firstAt: firstS * S, lastAt: lastS * S, revision: 0, createdRevision: 0,
  };
}

function history(attempts: AttemptRow[]): ContainerHistory {
  return { name: "web", kind: "app", attempts, totalAttempts: attempts.length, waitingNow: false };
}

const LIVENESS_KILL = "Container web failed liveness probe, will be restarted";

describe("how each attempt ended", () => {
  test("from the exit alone: 0 is Completed, anything else Error, the runtime's OOMKilled, no finish is running", () => {
    const [web] = timelineContainers(
      [history([attemptRow(0, 0, 1, 0), attemptRow(1, 2, 3, 1), attemptRow(2, 4, 5, 137, "OOMKilled"), attemptRow(3, 6, 7, 137), attemptRow(4, 8, null, null)])],
      [],
      10 * S,
    );
    expect(web!.attempts.map((a) => a.ending)).toEqual(["completed", "error", "oom", "error", "running"]);
  });

  test("an attempt with no recorded end that was followed by another ends where the next one starts", () => {
    const [web] = timelineContainers([history([attemptRow(0, 0, null, null), attemptRow(1, 6, null, null)])], [], 10 * S);
    expect(web!.attempts.map((a) => [a.ending, a.finishedAt])).toEqual([
      ["unrecorded", 6 * S],
      ["running", undefined],
    ]);
  });

  test("a failed start (no start time) is a bar of no length at its finish", () => {
    const [web] = timelineContainers([history([attemptRow(0, null, 5, 128, "StartError")])], [], 10 * S);
    expect(web!.attempts[0]).toMatchObject({ startedAt: 5 * S, finishedAt: 5 * S, ending: "error", reason: "StartError", exitCode: 128 });
  });

  test("a Killing event for a liveness failure inside an attempt makes it a probe kill; an exit of its own stays an Error", () => {
    const attempts = [attemptRow(0, 0, 10.5, 143), attemptRow(1, 11, 12, 1), attemptRow(2, 22, 30.5, 137)];
    const [web] = timelineContainers([history(attempts)], [event("Killing", LIVENESS_KILL, 10, 30, 2)], 40 * S);
    expect(web!.attempts.map((a) => a.ending)).toEqual(["probe-kill", "error", "probe-kill"]);
    expect(web!.attempts[0]!.killedBecause).toBe(LIVENESS_KILL);
  });

  test("between the first and last kill, signal exits count as kills only while the event's count covers them", () => {
    const attempts = [attemptRow(0, 0, 10.5, 143), attemptRow(1, 11, 20.5, 143), attemptRow(2, 21, 30.5, 143)];
    const three = timelineContainers([history(attempts)], [event("Killing", LIVENESS_KILL, 10, 30, 3)], 40 * S)[0]!;
    expect(three.attempts.map((a) => a.ending)).toEqual(["probe-kill", "probe-kill", "probe-kill"]);
    // Only two kills were counted: the middle 143 came from something else (a SIGTERM from outside).
    const two = timelineContainers([history(attempts)], [event("Killing", LIVENESS_KILL, 10, 30, 2)], 40 * S)[0]!;
    expect(two.attempts.map((a) => a.ending)).toEqual(["probe-kill", "error", "probe-kill"]);
  });

  test("a startup probe kill and a stop by the agent are told apart by the Killing message", () => {
    const attempts = [attemptRow(0, 0, 5, 143), attemptRow(1, 6, 9, 137)];
    const events = [event("Killing", "Container web failed startup probe, will be restarted", 4), event("Killing", "Stopping container web", 8)];
    const [web] = timelineContainers([history(attempts)], events, 10 * S);
    expect(web!.attempts.map((a) => a.ending)).toEqual(["probe-kill", "stopped"]);
  });

  test("an OOMKilled attempt stays OOMKilled even when a kill was under way", () => {
    const [web] = timelineContainers([history([attemptRow(0, 0, 5, 137, "OOMKilled")])], [event("Killing", LIVENESS_KILL, 4)], 10 * S);
    expect(web!.attempts[0]!.ending).toBe("oom");
  });

  test("probe failures and readiness changes become marks: a repeated event at its first and last time, with its count", () => {
    const events = [
      event("Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", 5, 25, 5),
      event("NotReady", "Container web is not ready", 15),
      event("Ready", "Container web is ready", 2),
      event("Started", "Started container web", 0),
    ];
    const [web] = timelineContainers([history([attemptRow(0, 0, null, null)])], events, 30 * S);
    expect(web!.marks.map((m) => [m.kind, m.at / S, m.count])).toEqual([
      ["unhealthy", 5, 5],
      ["unhealthy", 25, 5],
      ["not-ready", 15, 1],
      ["ready", 2, 1],
    ]);
  });

  test("attempts the query did not load are counted", () => {
    const [web] = timelineContainers([{ ...history([attemptRow(40, 0, 1, 1)]), totalAttempts: 41 }], [], 5 * S);
    expect(web!.unloadedAttempts).toBe(40);
  });
});
