/**
 * `events` over more events than fit in memory: written in pieces as the rows are read, each piece
 * waiting for the reader to take the one before, in the same layout and bytes as the whole list
 * where the whole list fits one page, in columns that fit every cell where it does not.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { eventsCommand } from "../../src/cli/events/events.ts";
import { formatEventList, formatEventRows } from "../../src/cli/events/events-format.ts";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import type { EventRow } from "../../src/store/queries.ts";
import { openStoreReader } from "../../src/store/reader.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

/** A database with `count` events over three pods, one a second; the late ones wider in every column. */
function eventsDb(dir: string, count: number, clock = new FakeClock()): { dbPath: string; clock: FakeClock } {
  const dbPath = join(dir, "state.db");
  const agent = openAgentDatabase(dbPath);
  const store = new SqliteStore({ db: agent.db, clock });
  const events: KubeEvent[] = [];
  for (let i = 0; i < count; i++) {
    const late = i >= count - 3;
    const pod = late ? "a-pod-with-a-much-longer-name-than-the-rest" : `web-${i % 3}`;
    const at = clock.now() - (count - i) * 1000;
    events.push({ at, type: i % 4 === 0 ? "Warning" : "Normal", reason: late ? "AReasonLongerThanAnyBefore" : "Started", podKey: `demo/${pod}`, namespace: "demo", pod, podUid: `uid-${pod}`, container: "web", message: `line ${i}` });
  }
  store.saveEvents(events);
  // A repeat, late: its LAST SEEN is the widest cell of its column.
  for (let i = 0; i < 12; i++) store.saveEvents([{ ...events[count - 1]!, at: clock.now() }]);
  agent.close();
  return { dbPath, clock };
}

function listed(dbPath: string): EventRow[] {
  using reader = openStoreReader(dbPath);
  return reader.store.events();
}

/** A reader that takes each piece a tick later and records how many were outstanding at once. */
function slowReader() {
  const pieces: string[] = [];
  let outstanding = 0;
  let mostOutstanding = 0;
  const sink = (text: string) => {
    pieces.push(text);
    mostOutstanding = Math.max(mostOutstanding, ++outstanding);
    return new Promise<void>((resolve) => setTimeout(() => (outstanding--, resolve()), 0));
  };
  return { sink, pieces, mostOutstanding: () => mostOutstanding };
}

test("a list longer than a page is written in pieces as it is read, one piece at a time", async () => {
  using dir = tempDir();
  const { dbPath, clock } = eventsDb(dir.path, 3000);
  const reader = slowReader();
  await eventsCommand({ db: dbPath }, { clock, stdout: reader.sink });
  expect(reader.pieces.length).toBeGreaterThan(1);
  expect(reader.mostOutstanding()).toBe(1);
  const lines = reader.pieces.join("").split("\n");
  expect(lines.pop()).toBe("");
  expect(lines.length).toBe(3001);
  // Every cell as the exact layout has it, every column starting where the header's does.
  const exact = formatEventRows(listed(dbPath), clock.now()).split("\n");
  expect(lines.map((line) => line.split(/ {3,}/))).toEqual(exact.slice(0, -1).map((line) => line.split(/ {3,}/)));
  const starts = ["TYPE", "REASON", "OBJECT", "MESSAGE"].map((title) => lines[0]!.indexOf(title));
  for (const line of lines) {
    for (const start of starts) expect([line[start - 1], line[start] !== " "]).toEqual([" ", true]);
  }
  // LAST SEEN is as wide as the store's bounds allow (any count up to its writes, any age), not as its widest cell.
  expect(lines.at(-1)).toMatch(/^0s \(x13 over 1s\) +Normal {4}AReasonLongerThanAnyBefore {3}pod\/a-pod-with-a-much-longer-name-than-the-rest {3}line 2999$/);
});

test("a list within one page keeps the exact layout of the whole list", async () => {
  using dir = tempDir();
  const { dbPath, clock } = eventsDb(dir.path, 40);
  let out = "";
  await eventsCommand({ db: dbPath }, { clock, stdout: (text) => void (out += text) });
  expect(out).toBe(formatEventRows(listed(dbPath), clock.now()));
});

test("-o json and -o yaml stream the bytes of the whole list, in pieces", async () => {
  using dir = tempDir();
  const { dbPath, clock } = eventsDb(dir.path, 800);
  const all = listed(dbPath);
  for (const format of ["json", "yaml"] as const) {
    const reader = slowReader();
    await eventsCommand({ db: dbPath, output: format }, { clock, stdout: reader.sink });
    expect(reader.pieces.length).toBeGreaterThan(1);
    expect(reader.pieces.join("")).toBe(formatEventList(all, format));
  }
  let one = "";
  await eventsCommand({ db: dbPath, output: "yaml", for: "pod/a-pod-with-a-much-longer-name-than-the-rest" }, { clock, stdout: (text) => void (one += text) });
  expect(one).toBe(formatEventList(all.filter((e) => e.pod === "a-pod-with-a-much-longer-name-than-the-rest"), "yaml"));
  let none = "";
  await eventsCommand({ db: dbPath, output: "json", for: "pod/nothing" }, { clock, stdout: (text) => void (none += text) });
  expect(none).toBe(formatEventList([], "json"));
});
