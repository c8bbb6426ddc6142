/**
 * Issue 16, compiled binary, process runtime: `timeline` draws what a real crash loop left in the
 * database, one bar per recorded attempt, in text and in SVG.
 */
import { expect, test } from "bun:test";
import { Agent, processE2E, waitFor, Workspace } from "./helpers.ts";
import { descendants, parseXml } from "../small-xml.ts";

const e2e = processE2E();

const CRASH = `apiVersion: v1
kind: Pod
metadata: {name: crash, namespace: e2e}
spec:
  terminationGracePeriodSeconds: 1
  initContainers:
    - {name: setup, image: busybox, command: ["sh", "-c", "echo ready"]}
  containers:
    - {name: crash, image: busybox, command: ["sh", "-c", "echo crashing; exit 1"]}
`;

interface AttemptRecord {
  container: string;
  attempt: number;
  exit_code: number | null;
}

test("a real crash loop: the crash row has a bar per recorded attempt, and the SVG a titled <rect> for each", async () => {
  const workspace = (e2e.ws = new Workspace());
  workspace.write("crash.yaml", CRASH);
  const agent = new Agent(workspace, ["--backoff-base", "1", "--backoff-max", "2"]);
  e2e.agents.push(agent);
  await waitFor(
    "crash to have failed four times",
    () => workspace.query<{ n: number }>("SELECT count(*) AS n FROM attempts WHERE container = 'crash' AND exit_code = 1")[0]!.n >= 4,
    20_000,
    () => agent.stdout + agent.stderr,
  );
  // With the agent gone the record stands still (the pods keep running, crash waits in back-off).
  expect(await agent.terminate()).toBe(0);
  e2e.agents.pop();
  const attempts = workspace.query<AttemptRecord>("SELECT container, attempt, exit_code FROM attempts ORDER BY container DESC, attempt");
  const crashes = attempts.filter((a) => a.container === "crash");

  const text = workspace.cli("timeline", "crash-n1", "-n", "e2e", "--width", "120");
  const rows = text.split("\n");
  expect(rows[0]).toStartWith("e2e/crash-n1: ");
  const setupRow = rows.find((row) => row.startsWith("setup (init)"))!;
  expect(setupRow.match(/=+/g)).toHaveLength(1);
  const crashRow = rows.find((row) => row.startsWith("crash "))!.slice("setup (init)  ".length);
  // Each finished crash is a run of `#`; a running last attempt would be `>`.
  const bars = crashRow.match(/#+|>+/g)!;
  expect(bars).toHaveLength(crashes.length);
  expect(bars.filter((bar) => bar.startsWith("#"))).toHaveLength(crashes.filter((a) => a.exit_code === 1).length);

  const svg = parseXml(workspace.cli("timeline", "crash-n1", "-n", "e2e", "-o", "svg"));
  const titles = descendants(svg)
    .filter((e) => e.name === "rect" && e.attributes.class?.startsWith("bar "))
    .map((bar) => bar.children.find((child) => child.name === "title")!.text);
  expect(titles).toHaveLength(attempts.length);
  expect(titles[0]).toMatch(/^setup attempt 0: \d\d:\d\d:\d\d to \d\d:\d\d:\d\d \(\d+s\), exit code 0, Completed$/);
  for (const [index, attempt] of crashes.entries()) {
    const expected = attempt.exit_code === 1 ? "exit code 1, Error" : "running";
    expect(titles[index + 1]).toStartWith(`crash attempt ${attempt.attempt}: `);
    expect(titles[index + 1]).toEndWith(expected);
  }
});
