import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";

/** Each runtime root gets its own cgroup identity; the file leaves none of their cgroups behind. */
const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let runtime: ProcessRuntime;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-loop-"));
  runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  h = realHarness(runtime);
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

const sh = (name: string, script: string, extra = {}) => container(name, { command: ["sh", "-c", script], ...extra });

describe("the loop with real processes", () => {
  test("crash loop: immediate first restart, then base, then 2 x base, with real exit codes", async () => {
    const crash = pod({ name: "crash", containers: [sh("crash", "echo crashing; exit 1")] });
    await h.kubelet.sync(desired(crash));
    const starts = await h.count((e) => e.reason === "Started", 4, 10_000);
    const gaps = starts.slice(1).map((s, i) => s.at - starts[i]!.at);
    // 0 wait, then 0.4s, then 0.8s (plus the few ms each run takes).
    expect(gaps[0]!).toBeLessThan(300);
    expect(gaps[1]!).toBeGreaterThanOrEqual(400);
    expect(gaps[1]!).toBeLessThan(750);
    expect(gaps[2]!).toBeGreaterThanOrEqual(800);
    const exited = h.events.find((e) => e.reason === "Exited")!;
    expect(exited.message).toBe("Container crash exited with code 1 (Error)");
    const record = h.kubelet.pods.get(crash.key)!;
    expect(record.phase).toBe("Running");
    expect(h.events.some((e) => e.reason === "BackOff")).toBe(true);
  });

  test("init container then app; OnFailure with exit 0 completes", async () => {
    const job = pod({
      name: "job",
      restartPolicy: "OnFailure",
      init: [sh("prepare", "echo prepared")],
      containers: [sh("job", "exit 0")],
    });
    await h.kubelet.sync(desired(job));
    await h.event((e) => e.reason === "Exited" && e.container === "job");
    await h.kubelet.idle();
    const record = h.kubelet.pods.get(job.key)!;
    expect(record.phase).toBe("Succeeded");
    expect(h.events.filter((e) => e.reason === "Started").map((e) => e.container)).toEqual(["prepare", "job"]);
  });

  test("a process that exits on SIGTERM reports 143; one that ignores it is killed at the grace with 137", async () => {
    const polite = pod({ name: "polite", grace: 2, containers: [sh("polite", "exec sleep 60")] });
    const trapped = join(root, "trapped");
    const stubborn = pod({ name: "stubborn", grace: 1, containers: [sh("stubborn", `trap '' TERM; touch ${trapped}; while true; do sleep 0.1; done`)] });
    await h.kubelet.sync(desired(polite, stubborn));
    await h.count((e) => e.reason === "Started", 2);
    // SIGTERM must find the trap in place, or the shell dies of it before ignoring it.
    for (let tries = 0; !existsSync(trapped); tries++) {
      expect(tries).toBeLessThan(200);
      await Bun.sleep(10);
    }
    const began = Date.now();
    await h.kubelet.sync(desired());
    const politeExit = await h.event((e) => e.reason === "Exited" && e.container === "polite");
    const stubbornExit = await h.event((e) => e.reason === "Exited" && e.container === "stubborn", 6000);
    expect(politeExit.message).toBe("Container polite exited with code 143 (Error)");
    expect(stubbornExit.message).toBe("Container stubborn exited with code 137 (Error): killed with SIGKILL when its grace period ran out");
    // Grace 1s is below the 2s floor: SIGKILL lands about 2s after SIGTERM.
    expect(stubbornExit.at - began).toBeGreaterThanOrEqual(1900);
    expect(h.events.some((e) => e.reason === "GraceExpired" && e.container === "stubborn")).toBe(true);
    await h.event((e) => e.reason === "PodRemoved" && e.pod === "stubborn-lab");
  });

  test("a SIGKILL the runtime refuses once is sent again, and the process that ignores SIGTERM dies with 137", async () => {
    const trapped = join(root, "trapped");
    const stubborn = pod({ name: "stubborn", grace: 1, containers: [sh("stubborn", `trap '' TERM; touch ${trapped}; while true; do sleep 0.1; done`)] });
    await h.kubelet.sync(desired(stubborn));
    await h.event((e) => e.reason === "Started");
    for (let tries = 0; !existsSync(trapped); tries++) {
      expect(tries).toBeLessThan(200);
      await Bun.sleep(10);
    }
    const kill = runtime.killContainer.bind(runtime);
    let refused = 0;
    runtime.killContainer = async (id, signal) => {
      if (signal === "SIGKILL" && refused++ === 0) throw new Error("monitor unreachable (injected)");
      return kill(id, signal);
    };
    await h.kubelet.sync(desired());
    const exited = await h.event((e) => e.reason === "Exited" && e.container === "stubborn", 8000);
    expect(exited.message).toBe("Container stubborn exited with code 137 (Error): killed with SIGKILL when its grace period ran out");
    expect(refused).toBeGreaterThanOrEqual(2);
    await h.event((e) => e.reason === "PodRemoved" && e.pod === "stubborn-lab");
  });

  test("preStop runs before SIGTERM, and the container sees its effect when SIGTERM arrives", async () => {
    const marker = join(root, "prestop-ran");
    const witness = join(root, "term-saw-prestop");
    const web = pod({
      name: "hooked",
      grace: 5,
      containers: [
        sh("web", `trap 'test -f ${marker} && echo yes > ${witness}; exit 0' TERM; while true; do sleep 0.05; done`, {
          preStop: { type: "exec", command: ["sh", "-c", `sleep 0.3; echo bye > ${marker}`] },
        }),
      ],
    });
    await h.kubelet.sync(desired(web));
    await h.event((e) => e.reason === "Started");
    await h.kubelet.sync(desired());
    const exit = await h.event((e) => e.reason === "Exited");
    expect(exit.message).toBe("Container web exited with code 0 (Completed)");
    expect(await Bun.file(witness).text()).toBe("yes\n");
    expect(h.events.some((e) => e.reason === "FailedPreStopHook")).toBe(false);
  });
});
