import { expect, test } from "bun:test";
import { eventsCommand } from "../../src/cli/events/events.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

async function crashLoop(dir: string) {
  const h = storeHarness(dir);
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] }), pod({ name: "web" })));
  await h.advance(60);
  return h;
}

test("events lists like kubectl events: oldest last-seen first, repeats counted", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  let out = "";
  await eventsCommand({ db: h.dbPath }, { clock: h.clock, stdout: (t) => (out += t) });
  expect(out).toBe(
    [
      "LAST SEEN           TYPE      REASON    OBJECT          MESSAGE",
      "60s                 Normal    Created   pod/web-lab     Created container: web",
      "60s                 Normal    Started   pod/web-lab     Started container web",
      "27s (x4 over 60s)   Normal    Created   pod/crash-lab   Created container: crash",
      "27s (x4 over 60s)   Normal    Started   pod/crash-lab   Started container crash",
      "26s (x4 over 59s)   Warning   Exited    pod/crash-lab   Container crash exited with code 1 (Error)",
      "26s (x3 over 58s)   Warning   BackOff   pod/crash-lab   Back-off restarting failed container crash in pod crash-lab",
      "",
    ].join("\n"),
  );
  h.agent.close();
});

test("--for pod/NAME and --types Warning narrow the list", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  let out = "";
  await eventsCommand({ db: h.dbPath, for: "pod/crash-lab", types: "warning" }, { clock: h.clock, stdout: (t) => (out += t) });
  expect(out.split("\n").filter(Boolean).map((line) => line.split(/\s{3,}/)[2])).toEqual(["REASON", "Exited", "BackOff"]);
  let none = "";
  await eventsCommand({ db: h.dbPath, for: "pod/web-lab", types: "Warning" }, { clock: h.clock, stdout: () => {}, stderr: (t) => (none += t) });
  expect(none).toBe("No events found.\n");
  await expect(eventsCommand({ db: h.dbPath, types: "Bad" }, { clock: h.clock })).rejects.toThrow('--types: unknown event type "Bad"');
  h.agent.close();
});

test("-o json prints v1 Events with count, first and last timestamps", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  let out = "";
  await eventsCommand({ db: h.dbPath, for: "pod/crash-lab", output: "json" }, { clock: h.clock, stdout: (t) => (out += t) });
  const list = JSON.parse(out);
  const backoff = list.items.find((e: { reason: string }) => e.reason === "BackOff");
  expect(list.kind).toBe("List");
  expect(backoff).toMatchObject({
    kind: "Event",
    type: "Warning",
    count: 3,
    firstTimestamp: "2026-01-01T12:00:02Z",
    lastTimestamp: "2026-01-01T12:00:34Z",
    involvedObject: { kind: "Pod", name: "crash-lab", namespace: "demo", fieldPath: "spec.containers{crash}" },
    source: { component: "kubelet" },
  });
  h.agent.close();
});

test("-w prints each new or repeated event while the agent keeps writing (a reader beside the writer)", async () => {
  using dir = tempDir();
  const h = await crashLoop(dir.path);
  const controller = new AbortController();
  let out = "";
  const watching = eventsCommand({ db: h.dbPath, for: "pod/crash-lab", types: "Warning", watch: true }, { clock: h.clock, stdout: (t) => (out += t), signal: controller.signal });
  const listed = out.split("\n").length;
  // The next crash and its BackOff show up at the next poll (500 ms), so they read "0s" ago.
  await h.advance(45);
  controller.abort();
  expect(await watching).toBe(0);
  const added = out.split("\n").slice(listed - 1).filter(Boolean);
  expect(added.map((line) => line.split(/\s{3,}/).slice(0, 3))).toEqual([
    ["0s (x5 over 74s)", "Warning", "Exited"],
    ["0s (x4 over 73s)", "Warning", "BackOff"],
  ]);
  h.agent.close();
});
