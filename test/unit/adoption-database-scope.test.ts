/**
 * Issue 11: two agents with different databases on one runtime root (or one engine, same --node)
 * adopted and removed each other's containers as "no pod explains it". A container is ours only if
 * it carries our database's identity; one without it is neither adopted nor removed.
 */
import { expect, test } from "bun:test";
import { planAdoption } from "../../src/kubelet/adoption/adoption.ts";
import { isOwnedBy, LABEL } from "../../src/runtime/labels.ts";
import type { ContainerInfo, SandboxInfo } from "../../src/runtime/runtime.ts";
import { FakeClock } from "../fake-clock.ts";
import { FakeRuntime } from "../fake-runtime.ts";
import { container, desired, pod } from "../pod-builder.ts";

const OURS = "a".repeat(32);
const THEIRS = "b".repeat(32);

test("only containers and sandboxes carrying our database's identity are adopted or removed", async () => {
  const clock = new FakeClock();
  const runtime = new FakeRuntime(clock);
  const owners = new Map<string, string | undefined>();
  const mine = pod({ name: "mine", node: "n1", containers: [container("mine")] });
  const theirs = pod({ name: "theirs", node: "n1", containers: [container("theirs")] });
  const unlabelled = pod({ name: "unlabelled", node: "n1", containers: [container("unlabelled")] });
  for (const [spec, owner] of [[mine, OURS], [theirs, THEIRS], [unlabelled, undefined]] as const) {
    const sandbox = await runtime.runPodSandbox(spec);
    await runtime.startContainer({ pod: spec, container: spec.containers[0]!, kind: "app", attempt: 0, sandbox });
    owners.set(spec.uid, owner);
  }
  const label = <T extends ContainerInfo | SandboxInfo>(info: T, uid: string): T => {
    const owner = owners.get(uid);
    return { ...info, labels: { ...info.labels, ...(owner ? { [LABEL.database]: owner } : {}) } };
  };
  const containers = (await runtime.listContainers()).map((c) => label(c, c.labels[LABEL.podUid]!));
  const sandboxes = (await runtime.listPodSandboxes()).map((s) => label(s, s.podUid));

  // The manifests of all three are wanted here too (same directory, same node): still not ours.
  const plan = planAdoption({ records: [], containers, sandboxes, desired: desired(mine, theirs, unlabelled), now: clock.now(), node: "n1", database: OURS });
  expect(plan.pods.map((p) => p.spec.name)).toEqual(["mine"]);
  const noWanted = planAdoption({ records: [], containers, sandboxes, desired: desired(), now: clock.now(), node: "n1", database: OURS });
  expect(noWanted.orphans.map((c) => c.labels[LABEL.containerName])).toEqual(["mine"]);
  expect(noWanted.orphanSandboxes.map((s) => s.podUid)).toEqual([mine.uid]);
});

test("isOwnedBy: the node must match when labelled, the database always", () => {
  expect(isOwnedBy({ [LABEL.database]: OURS, [LABEL.node]: "n1" }, { database: OURS, node: "n1" })).toBe(true);
  expect(isOwnedBy({ [LABEL.database]: OURS, [LABEL.node]: "n2" }, { database: OURS, node: "n1" })).toBe(false);
  expect(isOwnedBy({ [LABEL.database]: THEIRS, [LABEL.node]: "n1" }, { database: OURS, node: "n1" })).toBe(false);
  expect(isOwnedBy({ [LABEL.node]: "n1" }, { database: OURS, node: "n1" })).toBe(false);
});
