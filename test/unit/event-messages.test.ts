/**
 * Event messages name their container, as the kubelet's own do (`Started container web`): the
 * events minikubelet adds (Exited, Ready, NotReady, GraceExpired, Adopted, ...) too. The kubelet's
 * wordings that do not name it (a probe's result, `Error: ...`, an image pull) are kept as they are.
 */
import { expect, test } from "bun:test";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ScriptedProber } from "../scripted-prober.ts";

/** The kubelet's own wordings, which say which probe or image rather than which container. */
const KUBELET_WORDING_WITHOUT_NAME = new Set(["Unhealthy", "ProbeWarning", "Failed", "FailedPreStopHook", "FailedPostStartHook", "Pulling", "Pulled"]);

async function lifeOfTwoPods(): Promise<KubeEvent[]> {
  let prober!: ScriptedProber;
  const h = harness({ probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)) });
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  h.runtime.behaviours.set("stubborn", { ignoreSigterm: true });
  const web = pod({
    name: "web",
    grace: 3,
    containers: [container("stubborn", { readinessProbe: probe({ type: "exec", command: ["check"] }, { periodSeconds: 1 }) })],
  });
  const crash = pod({ name: "crash", containers: [container("crash")] });
  await h.kubelet.sync(desired(web, crash));
  await h.advance(2);
  prober.scripts.set("stubborn/readiness", () => ({ ok: false, message: "HTTP probe failed with statuscode: 503" }));
  await h.advance(4);
  await h.kubelet.sync(desired(crash));
  await h.advance(4);
  return h.events;
}

test("the events minikubelet adds name their container", async () => {
  const events = await lifeOfTwoPods();
  const message = (reason: string) => events.find((e) => e.reason === reason)?.message;
  expect(message("Exited")).toBe("Container crash exited with code 1 (Error)");
  expect(message("Ready")).toBe("Container stubborn is ready");
  expect(message("NotReady")).toBe("Container stubborn is not ready");
  expect(message("GraceExpired")).toBe("Container stubborn did not stop within its grace period (3s); sending SIGKILL");
  expect(events.filter((e) => e.reason === "Exited" && e.container === "stubborn").map((e) => e.message)).toEqual(["Container stubborn exited with code 137 (Error): killed with SIGKILL when its grace period ran out"]);
});

test("every event of a container names it, but for the kubelet's own wordings that say which probe or image", async () => {
  const events = await lifeOfTwoPods();
  expect(new Set(events.map((e) => e.reason))).toEqual(new Set(["Created", "Started", "Exited", "BackOff", "Ready", "NotReady", "Unhealthy", "Killing", "GraceExpired", "PodRemoved"]));
  const unnamed = events.filter((e) => e.container && !KUBELET_WORDING_WITHOUT_NAME.has(e.reason) && !e.message.includes(e.container));
  expect(unnamed.map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
});
