import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManifestWatcher } from "../../src/config/manifest-watcher.ts";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import { FakeClock } from "../fake-clock.ts";

const manifest = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "c", image: "x", command: ["true"] }] } });

let dir: string;
/** Where files are written before being renamed in, on the same file system. */
let outside: string;
let clock: FakeClock;
let reads: Array<string[]>;
let errors: string[];
let failures: string[];
let watcher: ManifestWatcher;

beforeEach(() => {
  outside = mkdtempSync(join(tmpdir(), "mk-watch-staging-"));
  dir = mkdtempSync(join(tmpdir(), "mk-watch-"));
  clock = new FakeClock();
  reads = [];
  errors = [];
  failures = [];
  watcher = new ManifestWatcher({
    dir,
    node: "lab",
    clock,
    resyncMs: 20_000,
    onPods: (pods: Map<PodKey, PodSpec>) => reads.push([...pods.keys()]),
    onError: (error) => errors.push(error.message),
    onReadFailure: (message) => failures.push(message),
  });
});

afterEach(() => {
  watcher.stop();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** Waits for the real fs.watch callbacks to arm a scan on the fake clock, and for the rest of the burst to arrive. */
async function watchFired(): Promise<void> {
  for (let i = 0; i < 200 && clock.pendingTimers() < 2; i++) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
}

describe("ManifestWatcher", () => {
  test("reads at start, then on an in-place edit (debounced: the write may come in pieces), then periodically", async () => {
    writeFileSync(join(dir, "a.json"), manifest("a"));
    watcher.start();
    expect(reads).toEqual([["default/a-lab"]]);
    writeFileSync(join(dir, "a.json"), manifest("b"));
    await watchFired();
    clock.step(99);
    expect(reads).toHaveLength(1);
    clock.step(1);
    expect(reads.at(-1)).toEqual(["default/b-lab"]);
    const before = reads.length;
    clock.step(20_000);
    expect(reads.length).toBe(before + 1);
  });

  test("a file renamed into the directory is read at once, without the debounce", async () => {
    watcher.start();
    const staged = join(outside, "b.json");
    writeFileSync(staged, manifest("b"));
    renameSync(staged, join(dir, "b.json"));
    await watchFired();
    clock.step(0);
    expect(reads.at(-1)).toEqual(["default/b-lab"]);
    expect(errors).toEqual([]);
  });

  test("a file created empty and written afterwards is not refused on the way: its read waits for the writes to settle", async () => {
    watcher.start();
    writeFileSync(join(dir, "b.json"), "");
    await watchFired();
    clock.step(0);
    expect(errors).toEqual([]);
    writeFileSync(join(dir, "b.json"), manifest("b"));
    await watchFired();
    clock.step(100);
    expect(errors).toEqual([]);
    expect(reads.at(-1)).toEqual(["default/b-lab"]);
  });

  test("a bad file renamed in is still refused, once the quiet period has passed", async () => {
    watcher.start();
    const staged = join(outside, "bad.yaml");
    writeFileSync(staged, "apiVersion: v1\nkind: Pod\n");
    renameSync(staged, join(dir, "bad.yaml"));
    await watchFired();
    clock.step(0);
    expect(errors).toEqual([]);
    clock.step(100);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith("bad.yaml: ");
  });

  test("a deeply nested file and a FIFO do not freeze the directory: a new manifest starts and a removed one stops in the same rescan", () => {
    writeFileSync(join(dir, "old.json"), manifest("old"));
    watcher.start();
    expect(reads).toEqual([["default/old-lab"]]);
    writeFileSync(join(dir, "deep.yaml"), `a: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`);
    writeFileSync(join(dir, "deep.json"), `${"[".repeat(50_000)}${"]".repeat(50_000)}`);
    expect(spawnSync("mkfifo", [join(dir, "pipe.yaml")]).status).toBe(0);
    unlinkSync(join(dir, "old.json"));
    writeFileSync(join(dir, "new.json"), manifest("new"));
    clock.step(20_000);
    expect(failures).toEqual([]);
    expect(reads.at(-1)).toEqual(["default/new-lab"]);
    expect(errors).toEqual([
      "deep.json: invalid JSON: exceeded max depth of 1000",
      "deep.yaml: invalid YAML: exceeded max depth of 1000",
      "pipe.yaml: is not a directory or regular file (a FIFO): not read",
    ]);
  });

  test("a bad file is reported once, not on every rescan, and again only after it changes", () => {
    writeFileSync(join(dir, "bad.yaml"), "apiVersion: v1\nkind: Pod\n");
    watcher.scan();
    watcher.scan();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith("bad.yaml: ");
    expect(reads).toEqual([[], []]);
    unlinkSync(join(dir, "bad.yaml"));
    watcher.scan();
    writeFileSync(join(dir, "bad.yaml"), "apiVersion: v1\nkind: Pod\n");
    watcher.scan();
    expect(errors).toHaveLength(2);
  });

  test("an unreadable directory keeps the pods as they are: no read is delivered", () => {
    writeFileSync(join(dir, "a.json"), manifest("a"));
    watcher.scan();
    rmSync(dir, { recursive: true, force: true });
    watcher.scan();
    expect(reads).toEqual([["default/a-lab"]]);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain(dir);
  });
});

describe("ManifestWatcher: refused files and field warnings", () => {
  let refusedCalls: { all: string[]; fresh: string[]; stopped: (string | undefined)[] }[];
  let warned: string[];

  beforeEach(() => {
    refusedCalls = [];
    warned = [];
    watcher = new ManifestWatcher({
      dir,
      node: "lab",
      clock,
      resyncMs: 20_000,
      rules: { runtime: "process" },
      onPods: (pods: Map<PodKey, PodSpec>) => reads.push([...pods.keys()]),
      onRefused: (all, fresh) =>
        refusedCalls.push({ all: all.map((r) => `${r.reason} ${r.namespace}/${r.name}`), fresh: fresh.map((r) => r.name), stopped: fresh.map((r) => r.stopped) }),
      onWarnings: (pod, issues) => warned.push(`${pod.key}: ${issues.length}`),
      onReadFailure: (message) => failures.push(message),
    });
  });

  test("the refused set is handed over after the first read and when it changes; a running pod's file turning bad names the pod", () => {
    writeFileSync(join(dir, "a.json"), manifest("a"));
    watcher.scan();
    expect(refusedCalls).toEqual([{ all: [], fresh: [], stopped: [] }]);
    // The process runtime's own rule: no command is an error there.
    writeFileSync(join(dir, "a.json"), manifest("a").replace(',"command":["true"]', ""));
    watcher.scan();
    watcher.scan();
    expect(reads.at(-1)).toEqual([]);
    expect(refusedCalls.slice(1)).toEqual([{ all: ["Invalid default/a-lab"], fresh: ["a-lab"], stopped: ["default/a-lab"] }]);
    writeFileSync(join(dir, "a.json"), "{");
    watcher.scan();
    expect(refusedCalls.slice(2)).toEqual([{ all: ["FailedToParse default/a.json"], fresh: ["a.json"], stopped: [undefined] }]);
    writeFileSync(join(dir, "a.json"), manifest("a"));
    watcher.scan();
    expect(refusedCalls.slice(3)).toEqual([{ all: [], fresh: [], stopped: [] }]);
    expect(reads.at(-1)).toEqual(["default/a-lab"]);
  });

  test("a pod's unknown or unsupported fields are reported once per pod, again for a new version of it", () => {
    const withTypo = (command: string) => manifest("a").replace('"command":["true"]', `"command":["${command}"],"comand":["x"]`);
    writeFileSync(join(dir, "a.json"), withTypo("true"));
    watcher.scan();
    watcher.scan();
    expect(warned).toEqual(["default/a-lab: 1"]);
    writeFileSync(join(dir, "a.json"), withTypo("false"));
    watcher.scan();
    expect(warned).toEqual(["default/a-lab: 1", "default/a-lab: 1"]);
  });

  test("a file that turned bad while no agent ran names the pod an earlier agent checkpointed from it", () => {
    const file = join(dir, "a.json");
    writeFileSync(file, "{");
    const stopped: (string | undefined)[] = [];
    const seeded = new ManifestWatcher({
      dir,
      node: "lab",
      clock,
      resyncMs: 20_000,
      checkpointed: new Map([[file, "default/a-lab"]]),
      onPods: () => {},
      onRefused: (_all, fresh) => stopped.push(...fresh.map((r) => r.stopped)),
      onReadFailure: () => {},
    });
    seeded.scan();
    expect(stopped).toEqual(["default/a-lab"]);
  });
});
