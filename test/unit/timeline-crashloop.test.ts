/**
 * `timeline` on a scripted crash loop: the fake runtime and fake clock drive a pod with an init
 * container, a crashing container and one killed once by its liveness probe, into a real database;
 * the command reads it back as text (compared whole) and as SVG (parsed, one bar per attempt).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { runCLI } from "../../src/cli/cli.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { timelineCommand, type TimelineDeps } from "../../src/cli/timeline.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { captureOutput } from "../capture-output.ts";
import { descendants, parseXml } from "../small-xml.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const exec = { type: "exec" as const, command: ["check"] };

/** 90 s of the lab pod: setup exits 0 at 2 s; crash exits 1 a second after each start; web's liveness fails from 30 s to 42 s. */
async function crashLoopDatabase(dir: string) {
  let prober!: ScriptedProber;
  const h = storeHarness(dir, { probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)) });
  h.runtime.behaviours.set("setup", { exitAfterMs: 2000, exitCode: 0 });
  h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
  const web = container("web", { livenessProbe: probe(exec, { periodSeconds: 5, failureThreshold: 2 }), readinessProbe: probe(exec, { periodSeconds: 5 }) });
  const lab = pod({ name: "lab", grace: 5, init: [container("setup")], containers: [container("crash"), web] });
  const start = h.clock.now();
  const failing = () => h.clock.now() - start >= 30_000 && h.clock.now() - start < 42_000;
  prober.scripts.set("web/liveness", () => ({ ok: !failing(), message: "HTTP probe failed with statuscode: 500" }));
  await h.kubelet.sync(desired(lab));
  await h.advance(90);
  return h;
}

async function timeline(pod: string, options: Parameters<typeof timelineCommand>[1], deps: TimelineDeps): Promise<string> {
  let out = "";
  await timelineCommand(pod, options, { utcOffsetMinutes: 0, terminalColumns: undefined, env: {}, stderr: () => {}, ...deps, stdout: (text) => (out += text) });
  return out;
}

// Read against the loop's events: setup 0-2 s exits 0; crash starts at 2, 3, 14, 35 and 76 s and
// exits 1 a second later (back-off 0, 10, 20, 40 s, now 13 s into 80); web is ready at 2 s, fails
// liveness at 32 and 37 s, is killed at 37 s (143) and restarted at once.
const EXPECTED = `demo/lab-lab: 12:00:00 to 12:01:30 (now) +0000, 1m30s
setup (init)  ==
crash           #.#...10s...#.......20s........#.................40s..................#....13s.....
web             KKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKKK.>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
                +                           !     !
              +--------------+-------------------+------------------+------------------------------+
              12:00:00       12:00:15            12:00:37           12:00:56                12:01:30
= Completed (exit 0)  # Error  K killed by liveness/startup probe  > running
.. back-off wait (its length)  ! probe failed  + ready
web: "Liveness probe failed: HTTP probe failed with statuscode: 500" x3 from 12:00:32 to 12:00:37
  (first and last marked)
`;

const ESC = "\x1b[";
const visibleWidth = (line: string) => line.replace(/\x1b\[[0-9;]*m/g, "").length;

describe("timeline of a scripted crash loop", () => {
  test("text: a row per container, a bar per attempt by how it ended, waits with their length, marks, axis, legend", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    expect(await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock })).toBe(EXPECTED);
    h.agent.close();
  });

  test("svg: one <rect> per attempt whose <title> names container, attempt, start, end, exit code and reason; marks and axis", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    const svg = parseXml(await timeline("lab-lab", { db: h.dbPath, output: "svg" }, { clock: h.clock }));
    expect(svg.name).toBe("svg");
    expect(svg.attributes.xmlns).toBe("http://www.w3.org/2000/svg");
    const all = descendants(svg);
    const titleOf = (element: (typeof all)[number]) => element.children.find((child) => child.name === "title")?.text;
    const bars = all.filter((e) => e.name === "rect" && e.attributes.class?.startsWith("bar "));
    expect(bars.map((bar) => [bar.attributes.class, titleOf(bar)])).toEqual([
      ["bar ending-completed", "setup attempt 0: 12:00:00 to 12:00:02 (2s), exit code 0, Completed"],
      ["bar ending-error", "crash attempt 0: 12:00:02 to 12:00:03 (1s), exit code 1, Error"],
      ["bar ending-error", "crash attempt 1: 12:00:03 to 12:00:04 (1s), exit code 1, Error"],
      ["bar ending-error", "crash attempt 2: 12:00:14 to 12:00:15 (1s), exit code 1, Error"],
      ["bar ending-error", "crash attempt 3: 12:00:35 to 12:00:36 (1s), exit code 1, Error"],
      ["bar ending-error", "crash attempt 4: 12:01:16 to 12:01:17 (1s), exit code 1, Error"],
      ["bar ending-probe-kill", "web attempt 0: 12:00:02 to 12:00:37 (35s), exit code 143, Error; Container web failed liveness probe, will be restarted"],
      ["bar ending-running", "web attempt 1: 12:00:37 to now (53s), running"],
    ]);
    // Bars of one row do not overlap, and each lies left of the next.
    const crashBars = bars.slice(1, 6).map((bar) => [Number(bar.attributes.x), Number(bar.attributes.x) + Number(bar.attributes.width)]);
    for (let i = 1; i < crashBars.length; i++) expect(crashBars[i]![0]!).toBeGreaterThan(crashBars[i - 1]![1]!);
    const marks = all.filter((e) => e.attributes.class?.startsWith("mark "));
    expect(marks.map((mark) => mark.attributes.class)).toEqual(["mark mark-ready", "mark mark-ready", "mark mark-unhealthy", "mark mark-unhealthy"]);
    expect(all.filter((e) => e.attributes.class === "wait").map(titleOf)).toEqual([
      "crash back-off wait of 0s",
      "crash back-off wait of 10s",
      "crash back-off wait of 20s",
      "crash back-off wait of 40s",
      "crash waiting to restart for 13s",
      "web back-off wait of 0s",
    ]);
    expect(all.filter((e) => e.attributes.class === "axis")).toHaveLength(1);
    expect(all.filter((e) => e.attributes.class === "legend").length).toBeGreaterThan(5);
    h.agent.close();
  });

  test("-o FILE.svg writes the picture to the file in one rename, nothing on stdout", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    const file = join(dir.path, "lab.svg");
    expect(await timeline("lab-lab", { db: h.dbPath, output: file }, { clock: h.clock })).toBe("");
    expect(parseXml(readFileSync(file, "utf8")).name).toBe("svg");
    expect(readdirSync(dir.path).filter((name) => name.includes(".tmp"))).toEqual([]);
    h.agent.close();
  });

  test("-c CONTAINER draws that container's row only", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    const out = await timeline("lab-lab", { db: h.dbPath, container: "crash" }, { clock: h.clock });
    const rows = out.split("\n").slice(1, 3);
    expect(rows[0]).toStartWith("crash  #.#..");
    expect(rows[1]).toStartWith("       +---");
    h.agent.close();
  });

  test("fits the terminal (80 to 200 columns) and colours it, unless NO_COLOR; --width overrides; no terminal: 100, no colour", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    const wide = await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock, terminalColumns: 300 });
    expect(wide).toContain(`${ESC}31m#${ESC}0m`);
    expect(Math.max(...wide.split("\n").map(visibleWidth))).toBe(200);
    const narrow = await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock, terminalColumns: 50, env: { NO_COLOR: "1" } });
    expect(narrow).not.toContain(ESC);
    expect(Math.max(...narrow.split("\n").map(visibleWidth))).toBe(80);
    const given = await timeline("lab-lab", { db: h.dbPath, width: "120" }, { clock: h.clock, terminalColumns: 80 });
    expect(Math.max(...given.split("\n").map(visibleWidth))).toBe(120);
    const piped = await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock });
    expect(piped).not.toContain(ESC);
    expect(Math.max(...piped.split("\n").map(visibleWidth))).toBe(100);
    h.agent.close();
  });
});

test("with no agent holding the database, the bars still reach now and stderr says nobody has looked since", async () => {
  using dir = tempDir();
  const h = await crashLoopDatabase(dir.path);
  let err = "";
  await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock, stderr: (text) => (err += text) });
  expect(err).toBe("");
  h.agent.close();
  await h.advance(60);
  const stale = await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock, stderr: (text) => (err += text) });
  expect(err).toMatch(/^agent not running, last update \d+s ago\n$/);
  expect(stale.split("\n")[0]).toBe("demo/lab-lab: 12:00:00 to 12:02:30 (now) +0000, 2m30s");
});

describe("timeline from the command line", () => {
  let stdout = "";
  let stderr = "";
  let output: { restore(): void } | undefined;
  beforeEach(() => {
    stdout = "";
    stderr = "";
    output = captureOutput((text) => (stdout += text), (text) => (stderr += text));
  });
  afterEach(() => output?.restore());

  test("a pod that is not there: kubectl's NotFound line and where to look, exit 1", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    h.agent.close();
    expect(await runCLI(["timeline", "nope", "--db", h.dbPath])).toBe(1);
    expect(stderr).toBe(`Error from server (NotFound): pods "nope" not found\nno pod named nope in any namespace of ${h.dbPath}\n`);
    expect(stdout).toBe("");
  });

  test("a container the pod does not have: one line, exit 1", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    h.agent.close();
    expect(await runCLI(["timeline", "lab-lab", "-c", "nope", "--db", h.dbPath])).toBe(1);
    expect(stderr).toBe("error: container nope is not valid for pod lab-lab\n");
  });

  test("an SVG file that cannot be written: one line naming it, exit 1", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    h.agent.close();
    const file = join(dir.path, "missing", "lab.svg");
    expect(await runCLI(["timeline", "lab-lab", "-o", file, "--db", h.dbPath])).toBe(1);
    expect(stderr).toEndWith(`error: -o ${file}: ENOENT: the picture was not written\n`);
    expect(existsSync(file)).toBe(false);
  });

  test("a bad -o or --width is a usage error, exit 2", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    h.agent.close();
    expect(await runCLI(["timeline", "lab-lab", "-o", "png", "--db", h.dbPath])).toBe(2);
    expect(stderr).toBe('error: -o must be text, svg, or a file name ending in .svg (got "png")\n');
    stderr = "";
    expect(await runCLI(["timeline", "lab-lab", "--width", "10", "--db", h.dbPath])).toBe(2);
    expect(stderr).toBe("error: --width must be a whole number of columns from 40 to 1000 (got 10)\n");
  });
});

test("a long crash loop: the newest 100 attempts are read, the picture shows the newest that fit, and the note counts the rest", async () => {
  using dir = tempDir();
  const h = storeHarness(dir.path, { baseSeconds: 1, capSeconds: 1 });
  h.runtime.behaviours.set("crash", { exitAfterMs: 100, exitCode: 1 });
  const crash = pod({ name: "crash", containers: [container("crash")] });
  await h.kubelet.sync(desired(crash));
  await h.advance(130);
  const total = h.runtime.startsOf("crash");
  expect(total).toBeGreaterThan(100);
  const { attempts, total: counted } = new StoreReader(h.agent.db).latestAttempts(crash.uid, "crash", 100);
  expect(counted).toBe(total);
  expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: 100 }, (_, k) => total - 100 + k));

  const out = await timeline("crash-lab", { db: h.dbPath }, { clock: h.clock });
  const drawn = out.split("\n")[1]!.match(/#+|>+/g)!.length;
  expect(out).toContain(`${total - drawn} older attempts before `);
  h.agent.close();
});

describe("timeline of a container with its own restart rules (KEP-5307)", () => {
  test("under pod Never: the restarts its In [42] rule made, and why the exit 1 after them stayed down", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("worker", (n) => ({ exitAfterMs: 1000, exitCode: n < 2 ? 42 : 1 }));
    const rules = [{ action: "Restart" as const, exitCodes: { operator: "In" as const, values: [42] } }];
    await h.kubelet.sync(desired(pod({ name: "job", restartPolicy: "Never", containers: [container("worker", { restartPolicy: "Never", restartPolicyRules: rules })] })));
    await h.advance(30);
    const out = await timeline("job-lab", { db: h.dbPath }, { clock: h.clock });
    // Notes wrap at the width, continued with an indent.
    expect(out.replace(/\n  /g, " ")).toContain("worker: 2 restarts by restartPolicyRules[0] (In [42]); not restarted after exit 1: it matches no rule and the container's restartPolicy is Never (the pod's restartPolicy is Never)\n");
    h.agent.close();
  });

  test("a container following the pod's policy gets no such line", async () => {
    using dir = tempDir();
    const h = await crashLoopDatabase(dir.path);
    expect(await timeline("lab-lab", { db: h.dbPath }, { clock: h.clock })).not.toContain("restartPolicy");
    h.agent.close();
  });
});
