/**
 * computePodActions as a table: a pod as the pass finds it (spec, containers as last seen, sandbox,
 * probe verdicts, back-off entries, the time) and the plan it must yield. Each row names its case;
 * the plan is compared as a short summary (who is killed why and with which message, who starts in
 * which order behind which gate or back-off). The function must not touch its input.
 */
import { describe, expect, test } from "bun:test";
import { computePodActions, type PodActions, type PodActionsInput, type SandboxView } from "../../src/kubelet/compute-pod-actions.ts";
import { DEFAULT_BACKOFF } from "../../src/kubelet/backoff.ts";
import { newPodRecord, transition, type ContainerRecord, type PodRecord, type RunningState } from "../../src/kubelet/pod-state.ts";
import type { ContainerSpec, PodSpec } from "../../src/manifest/types.ts";
import { container, pod, probe } from "../pod-builder.ts";

const NOW = 1_700_000_000_000;
const exec = { type: "exec" as const, command: ["true"] };

const sidecar = (name: string, extra: Partial<ContainerSpec> = {}) => container(name, { restartPolicy: "Always", ...extra });

function record(spec: PodSpec, extra: Partial<PodRecord> = {}): PodRecord {
  const rec = newPodRecord(spec, NOW - 600_000);
  rec.sandbox = { id: "sandbox-1", ip: "10.0.0.2", podUid: spec.uid };
  return Object.assign(rec, extra);
}

function find(pod: PodRecord, name: string): ContainerRecord {
  const found = [...pod.init, ...pod.app, ...(pod.ephemeral ?? [])].find((c) => c.name === name);
  if (!found) throw new Error(`no container ${name}`);
  return found;
}

/** The container runs its attempt number `attempts - 1`, started a minute ago. */
function running(pod: PodRecord, name: string, extra: Partial<RunningState> = {}, attempts = 1): void {
  const c = find(pod, name);
  transition(c, { state: "running", containerId: `${name}-${attempts - 1}`, startedAt: NOW - 60_000, ready: true, started: true, ...extra });
  c.attempts = attempts;
}

/** The container's latest attempt exited with `exitCode` at `finishedAt`. */
function exited(pod: PodRecord, name: string, exitCode: number, finishedAt = NOW - 1000, attempts = 1): void {
  const c = find(pod, name);
  transition(c, {
    state: "terminated",
    terminated: { containerId: `${name}-${attempts - 1}`, exitCode, reason: exitCode === 0 ? "Completed" : "Error", startedAt: finishedAt - 5000, finishedAt },
    ready: false,
    started: false,
  });
  c.attempts = attempts;
}

interface Row {
  name: string;
  pod: () => PodRecord;
  sandbox?: SandboxView;
  probes?: PodActionsInput["probes"];
  backoff?: PodActionsInput["backoff"]["entries"];
  expect: Partial<Summary>;
}

interface Summary {
  killPod: boolean;
  createSandbox: boolean;
  kill: string[];
  resetInit: string[] | null;
  forget: string[];
  held: string | null;
  start: string[];
  initialized: boolean;
  initFailed: boolean;
  after: string[];
}

function summary(a: PodActions): Summary {
  const seconds = (ms: number) => `${ms / 1000}s`;
  return {
    killPod: a.killPod,
    createSandbox: a.createSandbox,
    kill: a.containersToKill.map((k) => `${k.name} ${k.reason} ${seconds(k.graceMs)}: ${k.message}`),
    resetInit: a.resetInit ?? null,
    forget: a.backOffsToForget,
    held: a.startsHeldBy ?? null,
    start: [...a.ephemeralContainersToStart, ...a.initContainersToStart, ...a.containersToStart].map(
      (s) => `${s.name} ${s.kind} ${s.then}${s.backOff ? ` back-off until +${seconds(s.backOff.until - NOW)}${s.backOff.announce ? " (announce)" : ""}` : ""}`,
    ),
    initialized: a.initialized,
    initFailed: a.initFailed,
    after: [
      ...a.afterStarts.containersToKill.map((k) => `${k.name} ${k.reason} ${seconds(k.graceMs)}: ${k.message}`),
      ...a.afterStarts.probes.map(
        (p) => `${p.name}${p.started ? " started" : ""}${p.ready !== undefined ? ` ready=${p.ready}` : ""}${p.kill ? ` ${p.kill.reason} ${seconds(p.kill.graceMs)}: ${p.kill.message}` : ""}`,
      ),
    ],
  };
}

const rows: Row[] = [
  // Init containers, in order.
  {
    name: "init: a new pod starts its first init container alone",
    pod: () => record(pod({ init: [container("i1"), container("i2")], containers: [container("a")] })),
    expect: { createSandbox: false, start: ["i1 init last"], initialized: false, kill: [] },
  },
  {
    name: "init: once the first succeeded, the second starts",
    pod: () => {
      const p = record(pod({ init: [container("i1"), container("i2")], containers: [container("a")] }));
      exited(p, "i1", 0);
      return p;
    },
    expect: { start: ["i2 init last"], initialized: false },
  },
  {
    name: "init: a running init container holds the others and the app",
    pod: () => {
      const p = record(pod({ init: [container("i1"), container("i2")], containers: [container("a")] }));
      running(p, "i1");
      return p;
    },
    expect: { start: [], initialized: false },
  },
  {
    name: "init: all succeeded, the app containers start",
    pod: () => {
      const p = record(pod({ init: [container("i1")], containers: [container("a"), container("b")] }));
      exited(p, "i1", 0);
      return p;
    },
    expect: { start: ["a app untilHook", "b app untilHook"], initialized: true },
  },
  {
    name: "init: a failed init container under restartPolicy Never fails the pod, nothing starts",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", init: [container("i1")], containers: [container("a")] }));
      exited(p, "i1", 1);
      return p;
    },
    expect: { start: [], held: "podFinished", initialized: false },
  },
  {
    name: "init: under Never, a failed init container that a restart rule matches runs again",
    pod: () => {
      const rules = [{ action: "Restart" as const, exitCodes: { operator: "In" as const, values: [42] } }];
      const p = record(pod({ restartPolicy: "Never", init: [container("i1", { restartPolicy: "Never", restartPolicyRules: rules })], containers: [container("a")] }));
      exited(p, "i1", 42);
      return p;
    },
    expect: { start: ["i1 init last"], initFailed: false },
  },
  {
    name: "init: a failed init container under restartPolicy Always starts again, after its back-off",
    pod: () => {
      const p = record(pod({ init: [container("i1")], containers: [container("a")] }));
      exited(p, "i1", 1, NOW - 2000);
      return p;
    },
    backoff: { i1: { delayMs: 10_000, updatedAt: NOW - 30_000 } },
    expect: { start: ["i1 init last back-off until +8s (announce)"], initFailed: false },
  },
  {
    name: "init: a pod already failed by an init container starts nothing",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", init: [container("i1")], containers: [container("a")] }), { initFailed: true });
      exited(p, "i1", 1);
      return p;
    },
    expect: { start: [], held: "podFinished" },
  },
  // Native sidecars.
  {
    name: "sidecar: starts first and lets the next init container start in the same pass once started",
    pod: () => record(pod({ init: [sidecar("s1"), container("i2")], containers: [container("a")] })),
    expect: { start: ["s1 sidecar untilStarted", "i2 init last"], initialized: false },
  },
  {
    name: "sidecar: the app containers start once the sidecars have started",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1"), sidecar("s2")], containers: [container("a")] }));
      running(p, "s1");
      return p;
    },
    expect: { start: ["s2 sidecar untilStarted", "a app untilHook"], initialized: true },
  },
  {
    name: "sidecar: one not started yet (its startup probe) holds the rest",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1", { startupProbe: probe(exec) }), container("i2")], containers: [container("a")] }));
      running(p, "s1", { started: false, ready: false });
      return p;
    },
    expect: { start: [], initialized: false },
  },
  {
    name: "sidecar: a sidecar that exited after the pod was initialized restarts beside the running app",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1")], containers: [container("a")] }), { initialized: true });
      exited(p, "s1", 1, NOW - 1000);
      running(p, "a");
      return p;
    },
    expect: { start: ["s1 sidecar untilHook"], initialized: true },
  },
  {
    name: "sidecar: one waiting out its back-off before initialization holds the rest",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1"), container("i2")], containers: [container("a")] }));
      exited(p, "s1", 1, NOW - 1000, 2);
      return p;
    },
    backoff: { s1: { delayMs: 20_000, updatedAt: NOW - 30_000 } },
    expect: { start: ["s1 sidecar untilStarted back-off until +19s (announce)"], initialized: false },
  },
  // App containers and the restart policy.
  {
    name: "app: under Always a completed container starts again",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      exited(p, "a", 0);
      return p;
    },
    expect: { start: ["a app untilHook"] },
  },
  {
    name: "app: under OnFailure a completed container stays stopped, a failed one restarts",
    pod: () => {
      const p = record(pod({ restartPolicy: "OnFailure", containers: [container("ok"), container("bad")] }), { initialized: true });
      exited(p, "ok", 0);
      exited(p, "bad", 2);
      return p;
    },
    expect: { start: ["bad app untilHook"] },
  },
  {
    name: "app: under Never a failed container is not restarted",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", containers: [container("a"), container("b")] }), { initialized: true });
      exited(p, "a", 1);
      running(p, "b");
      return p;
    },
    expect: { start: [], held: null },
  },
  {
    name: "app: a container's own restartPolicy overrides the pod's",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", containers: [container("a", { restartPolicy: "OnFailure" }), container("b")] }), { initialized: true });
      exited(p, "a", 3);
      running(p, "b");
      return p;
    },
    expect: { start: ["a app untilHook"] },
  },
  // Back-off.
  {
    name: "back-off: a crashed container is not started before its back-off expires, the wait announced once",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      exited(p, "a", 1, NOW - 4000, 3);
      return p;
    },
    backoff: { a: { delayMs: 20_000, updatedAt: NOW - 30_000 } },
    expect: { start: ["a app untilHook back-off until +16s (announce)"] },
  },
  {
    name: "back-off: a wait already announced is not announced again",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      exited(p, "a", 1, NOW - 4000, 3);
      find(p, "a").backoffAnnouncedFor = NOW - 4000;
      return p;
    },
    backoff: { a: { delayMs: 20_000, updatedAt: NOW - 30_000 } },
    expect: { start: ["a app untilHook back-off until +16s"] },
  },
  {
    name: "back-off: once it expired the container starts",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      exited(p, "a", 1, NOW - 20_000, 3);
      return p;
    },
    backoff: { a: { delayMs: 20_000, updatedAt: NOW - 30_000 } },
    expect: { start: ["a app untilHook"] },
  },
  {
    name: "back-off: an entry older than twice the cap is forgotten, the restart is at once",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      exited(p, "a", 1, NOW - 1000, 9);
      return p;
    },
    backoff: { a: { delayMs: 300_000, updatedAt: NOW - 1000 - 2 * DEFAULT_BACKOFF.capMs - 1 } },
    expect: { start: ["a app untilHook"] },
  },
  // Probes.
  {
    name: "probe: a liveness failure kills the container with the kubelet's message",
    pod: () => {
      const p = record(pod({ containers: [container("a", { livenessProbe: probe(exec) })] }), { initialized: true });
      running(p, "a");
      return p;
    },
    probes: { a: { liveness: "failure" } },
    expect: { kill: [], after: ["a liveness 30s: Container a failed liveness probe, will be restarted"] },
  },
  {
    name: "probe: under Never the liveness kill does not say it will be restarted; the probe's own grace applies",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", containers: [container("a", { livenessProbe: probe(exec, { terminationGracePeriodSeconds: 5 }) })] }), { initialized: true });
      running(p, "a");
      return p;
    },
    probes: { a: { liveness: "failure" } },
    expect: { after: ["a liveness 5s: Container a failed liveness probe"] },
  },
  {
    name: "probe: a startup failure kills, a success marks the container started",
    pod: () => {
      const p = record(pod({ containers: [container("a", { startupProbe: probe(exec) }), container("b", { startupProbe: probe(exec) })] }), { initialized: true });
      running(p, "a", { started: false, ready: false });
      running(p, "b", { started: false, ready: false });
      return p;
    },
    probes: { a: { startup: "failure" }, b: { startup: "success" } },
    expect: { after: ["a startup 30s: Container a failed startup probe, will be restarted", "b started ready=true"] },
  },
  {
    name: "probe: readiness follows its verdict; an unknown verdict changes nothing",
    pod: () => {
      const p = record(pod({ containers: [container("a", { readinessProbe: probe(exec) }), container("b", { readinessProbe: probe(exec) })] }), { initialized: true });
      running(p, "a");
      running(p, "b", { ready: false });
      return p;
    },
    probes: { a: { readiness: "failure" }, b: { readiness: "unknown" } },
    expect: { after: ["a ready=false"] },
  },
  {
    name: "probe: a container being stopped is not probed",
    pod: () => {
      const p = record(pod({ containers: [container("a", { livenessProbe: probe(exec) })] }), { initialized: true });
      running(p, "a", { stopping: { cause: "liveness", startedAt: NOW - 1000, graceMs: 30_000, stage: "sigterm", deadline: NOW + 29_000 } });
      return p;
    },
    probes: { a: { liveness: "failure" } },
    expect: { kill: [], after: [] },
  },
  // Definition changes (a pod updated in place).
  {
    name: "changed: a running container whose definition changed is killed, to be restarted",
    pod: () => {
      const p = record(pod({ containers: [container("a"), container("b")] }), { initialized: true });
      running(p, "a");
      running(p, "b");
      find(p, "a").definitionChanged = true;
      return p;
    },
    expect: { kill: ["a changed 30s: Container a definition changed, will be restarted"], start: [] },
  },
  {
    name: "changed: a stopped container whose definition changed starts at once, whatever its policy and back-off",
    pod: () => {
      const p = record(pod({ restartPolicy: "OnFailure", containers: [container("a"), container("b")] }), { initialized: true });
      exited(p, "a", 0, NOW - 1000, 2);
      running(p, "b");
      find(p, "a").definitionChanged = true;
      return p;
    },
    backoff: { a: { delayMs: 40_000, updatedAt: NOW - 2000 } },
    expect: { forget: ["a"], start: ["a app untilHook"] },
  },
  // Deletion.
  {
    name: "deletion: every running container but the sidecars is stopped with the pod's remaining grace",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1"), sidecar("s2")], containers: [container("a"), container("b")] }), {
        initialized: true,
        deletionRequestedAt: NOW - 10_000,
        deletionCause: "removed",
      });
      for (const name of ["s1", "s2", "a", "b"]) running(p, name);
      return p;
    },
    expect: { killPod: true, kill: ["a removed 20s: Stopping container a", "b removed 20s: Stopping container b"], start: [] },
  },
  {
    name: "deletion: once the app containers are gone, the last sidecar stops first",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1"), sidecar("s2")], containers: [container("a")] }), { initialized: true, deletionRequestedAt: NOW, deletionCause: "shutdown" });
      running(p, "s1");
      running(p, "s2");
      exited(p, "a", 143);
      return p;
    },
    expect: { killPod: true, kill: ["s2 shutdown 30s: Stopping container s2"] },
  },
  {
    name: "deletion: a sidecar stops only after the later one has exited",
    pod: () => {
      const p = record(pod({ init: [sidecar("s1"), sidecar("s2")], containers: [container("a")] }), { initialized: true, deletionRequestedAt: NOW, deletionCause: "removed" });
      running(p, "s1");
      running(p, "s2", { stopping: { cause: "removed", startedAt: NOW, graceMs: 30_000, stage: "sigterm", deadline: NOW + 30_000 } });
      exited(p, "a", 143);
      return p;
    },
    expect: { killPod: true, kill: [] },
  },
  {
    name: "finished: a pod whose app containers completed for good stops its last sidecar",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", init: [sidecar("s1"), sidecar("s2")], containers: [container("a")] }), { initialized: true });
      running(p, "s1");
      running(p, "s2");
      exited(p, "a", 0);
      return p;
    },
    expect: { held: "podFinished", start: [], after: ["s2 completed 30s: Stopping container s2"] },
  },
  // The sandbox.
  {
    name: "sandbox: missing, it is created and the pod starts from its first init container",
    pod: () => {
      const p = record(pod({ init: [container("i1")], containers: [container("a")] }));
      p.sandbox = undefined;
      return p;
    },
    sandbox: "missing",
    expect: { createSandbox: true, start: ["i1 init last"] },
  },
  {
    name: "sandbox: replaced after it died, what ran in it is killed at once and the init containers run again",
    pod: () => {
      const p = record(pod({ init: [container("i1"), sidecar("s1")], containers: [container("a")] }), { initialized: true });
      exited(p, "i1", 0);
      running(p, "s1");
      running(p, "a");
      return p;
    },
    sandbox: "replaced",
    expect: {
      kill: ["s1 sandboxChanged 0s: Stopping container s1: its pod sandbox changed", "a sandboxChanged 0s: Stopping container a: its pod sandbox changed"],
      resetInit: ["i1"],
      start: ["i1 init last"],
      initialized: false,
    },
  },
  {
    name: "sandbox: died under a pod that must not restart, what ran is killed and nothing is made again",
    pod: () => {
      const p = record(pod({ restartPolicy: "Never", containers: [container("a")] }), { initialized: true });
      running(p, "a");
      return p;
    },
    sandbox: "died",
    expect: { createSandbox: false, resetInit: null, kill: ["a sandboxDied 0s: Stopping container a: its pod sandbox died and restartPolicy is Never"], start: [] },
  },
  // postStart hooks, eviction, ephemeral containers.
  {
    name: "postStart: while a hook runs nothing else of the pod starts",
    pod: () => {
      const p = record(pod({ containers: [container("a"), container("b")] }), { initialized: true });
      running(p, "a", { postStart: { startedAt: NOW - 1000 }, started: false, ready: false });
      return p;
    },
    expect: { held: "postStartHook", start: [] },
  },
  {
    name: "postStart: a failed hook has its container killed with the kubelet's reason as message",
    pod: () => {
      const p = record(pod({ containers: [container("a")] }), { initialized: true });
      running(p, "a", { postStart: { startedAt: NOW - 1000, failed: "exit 1" }, started: false, ready: false });
      return p;
    },
    expect: { kill: ["a postStart 30s: FailedPostStartHook"] },
  },
  {
    name: "evicted: every running container is stopped with the eviction's grace, nothing restarts",
    pod: () => {
      const p = record(pod({ containers: [container("a"), container("b")] }), { initialized: true, evicted: { message: "emptyDir over its limit" } });
      running(p, "a");
      exited(p, "b", 1);
      return p;
    },
    expect: { kill: ["a evicted 1s: Stopping container a"], held: "podFinished", start: [] },
  },
  {
    name: "ephemeral: a debug container starts once, before the init containers",
    pod: () => {
      const spec = pod({ init: [container("i1")], containers: [container("a")] });
      const p = record({ ...spec, ephemeralContainers: [container("debug"), container("done")] });
      exited(p, "done", 0);
      return p;
    },
    expect: { start: ["debug ephemeral continue", "i1 init last"] },
  },
];

describe("computePodActions", () => {
  for (const row of rows) {
    test(row.name, () => {
      const p = row.pod();
      const input: PodActionsInput = {
        pod: p,
        sandbox: row.sandbox ?? (p.sandbox ? "ready" : "missing"),
        backoff: { settings: DEFAULT_BACKOFF, entries: row.backoff ?? {} },
        now: NOW,
        probes: row.probes ?? {},
      };
      const before = structuredClone(input);
      const actions = computePodActions(input);
      expect(summary(actions)).toMatchObject(row.expect);
      // Pure: the input is left as it was, and the same input gives the same plan.
      expect(input).toEqual(before);
      expect(computePodActions(structuredClone(before))).toEqual(actions);
    });
  }
});
