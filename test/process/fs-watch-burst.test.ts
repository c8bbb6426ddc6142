/**
 * The agent watches its manifest and container-event directories with fs.watch. Bun 1.3.9's watch
 * thread could loop for good over the same events after a burst (oven-sh/bun#27667): a core burnt
 * while idle, and in the suite a test file that never finished loading. This pins the bun we ship
 * to one whose watch goes quiet after a burst.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

test("after a burst of 1000 files renamed into watched directories, an idle process uses no CPU", async () => {
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "../fixtures/watch-burst.ts")], { stdout: "pipe", stderr: "inherit", timeout: 30_000 });
  const [out, exitCode] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  expect(exitCode).toBe(0);
  const { idleCpuMs } = JSON.parse(out) as { idleCpuMs: number };
  // Spinning is the whole second (~1000 ms); quiet is ~10 ms.
  expect(idleCpuMs).toBeLessThan(300);
});
