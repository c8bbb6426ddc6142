import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManifestWatcher } from "../../src/kubelet/manifest-watcher.ts";
import type { PodKey, PodSpec } from "../../src/manifest/types.ts";
import { FakeClock } from "../fake-clock.ts";

const manifest = (name: string) => JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name }, spec: { containers: [{ name: "c", image: "x", command: ["true"] }] } });

let dir: string;
let clock: FakeClock;
let reads: Array<string[]>;
let errors: string[];
let failures: string[];
let watcher: ManifestWatcher;

beforeEach(() => {
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
});

/** Waits for the real fs.watch callback to arm the debounce timer on the fake clock. */
async function watchFired(): Promise<void> {
  for (let i = 0; i < 200 && clock.pendingTimers() < 2; i++) await new Promise((r) => setTimeout(r, 5));
}

describe("ManifestWatcher", () => {
  test("reads at start, then on a file change (debounced), then periodically", async () => {
    writeFileSync(join(dir, "a.json"), manifest("a"));
    watcher.start();
    expect(reads).toEqual([["default/a-lab"]]);
    writeFileSync(join(dir, "b.json"), manifest("b"));
    await watchFired();
    clock.step(99);
    expect(reads).toHaveLength(1);
    clock.step(1);
    expect(reads.at(-1)).toEqual(["default/a-lab", "default/b-lab"]);
    const before = reads.length;
    clock.step(20_000);
    expect(reads.length).toBe(before + 1);
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
