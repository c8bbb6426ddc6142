/** The emptyDir measurement: allocated blocks of the tree, a hard link once, a bounded walk. */
import { expect, test } from "bun:test";
import { linkSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { measureDir } from "../../src/eviction/dir-usage.ts";

test("nested files count by their blocks, a hard link once; a missing directory holds nothing; past the budget a lower bound", async () => {
  const root = mkdtempSync(join(tmpdir(), "mk-du-"));
  try {
    const empty = await measureDir(root);
    mkdirSync(join(root, "a/b"), { recursive: true });
    writeFileSync(join(root, "a/b/blob"), Buffer.alloc(256 * 1024, 1));
    const one = await measureDir(root);
    linkSync(join(root, "a/b/blob"), join(root, "again"));
    const linked = await measureDir(root);
    expect(one.complete).toBe(true);
    expect(one.bytes - empty.bytes).toBeGreaterThanOrEqual(256 * 1024);
    // The link adds a directory entry, not blocks.
    expect(linked.bytes).toBe(one.bytes);
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `f${i}`), "x");
    expect((await measureDir(root, 5)).complete).toBe(false);
    expect(await measureDir(join(root, "nope"))).toEqual({ bytes: 0, complete: true });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
