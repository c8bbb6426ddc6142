/**
 * A container the runtime refuses to signal because nothing proves it (or its process) its own
 * (ContainerNotFoundError: a corrupt config.json or pid file in the process runtime) is taken for
 * gone at the SIGKILL, like a container the kubelet's runtime cannot find: ContainerStatusUnknown,
 * one Warning that says why, and the pod's stop ends instead of sending SIGKILL forever.
 */
import { expect, test } from "bun:test";
import { container, desired, pod } from "../pod-builder.ts";
import { harness } from "../kubelet-harness.ts";
import { ContainerNotFoundError } from "../../src/runtime/runtime.ts";

const WHY = "container x cannot be proven created by this agent's database (config.json is not JSON): not signalled, its processes left running";

test("a stop the runtime refuses as not found ends with the container unknown and one Warning, not a SIGKILL loop", async () => {
  const h = harness();
  await h.kubelet.sync(desired(pod({ name: "web", grace: 5, containers: [container("web")] })));
  let refused = 0;
  h.runtime.killContainer = async () => {
    refused++;
    throw new ContainerNotFoundError(WHY);
  };
  await h.kubelet.sync(desired());
  await h.advance(60);
  expect(h.lines((e) => ["GraceExpired", "Exited", "PodRemoved"].includes(e.reason))).toEqual([
    "5.0s GraceExpired web",
    `5.0s Exited web exited with code 137 (ContainerStatusUnknown): ${WHY}`,
    "5.0s PodRemoved",
  ]);
  expect(h.events.filter((e) => e.type === "Warning" && e.reason === "Exited")).toHaveLength(1);
  expect(refused).toBe(2); // the SIGTERM and one SIGKILL, never again
  expect(h.kubelet.pods.size).toBe(0);
});
