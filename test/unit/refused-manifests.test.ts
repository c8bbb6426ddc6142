/**
 * A manifest file the agent refuses is visible where the user looks: `get pods` lists it as
 * STATUS Invalid with its file, `describe` lists every problem with its field path, `events` has
 * the Warning; all from the database, and gone from `get` once the file is fixed.
 */
import { expect, test } from "bun:test";
import { refusedPodObject } from "../../src/v1/refused-pod.ts";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeCommand } from "../../src/cli/describe/describe.ts";
import { eventsCommand } from "../../src/cli/events/events.ts";
import { getCommand } from "../../src/cli/get/get.ts";
import { ManifestWatcher } from "../../src/config/manifest-watcher.ts";
import { refusedManifestEvent, type RefusedManifest } from "../../src/config/refused-manifests.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { watchPods } from "../../src/store/pods-view.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const BAD_WEB = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: demo}
spec:
  containers:
    - name: web
      comand: ["sleep", "60"]
`;

function agentOn(dir: string) {
  const clock = new FakeClock();
  const database = openAgentDatabase(join(dir, "state.db"));
  const store = new SqliteStore({ db: database.db, clock });
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  const watcher = new ManifestWatcher({
    dir: manifests,
    node: "",
    clock,
    resyncMs: 20_000,
    rules: { runtime: "process" },
    onPods: () => {},
    onRefused: (refused, fresh) => store.saveRefusedManifests(refused, fresh.map((entry) => refusedManifestEvent(entry, clock.now())), refusedPodObject),
    onReadFailure: () => {},
  });
  return { clock, database, store, manifests, watcher, db: join(dir, "state.db") };
}

async function capture(run: (out: (text: string) => void, err: (text: string) => void) => Promise<number>) {
  let stdout = "";
  let stderr = "";
  const code = await run((t) => void (stdout += t), (t) => void (stderr += t));
  return { code, stdout, stderr };
}

test("get, describe and events show a refused file until it is fixed", async () => {
  using dir = tempDir();
  const agent = agentOn(dir.path);
  const file = join(agent.manifests, "web.yaml");
  writeFileSync(file, BAD_WEB);
  writeFileSync(join(agent.manifests, "junk.json"), "{");
  agent.watcher.scan();
  agent.clock.step(5000);

  const listed = await capture((out, err) => getCommand("pods", undefined, { db: agent.db, allNamespaces: true }, { clock: agent.clock, stdout: out, stderr: err }));
  expect(listed.stdout).toBe(
    [
      "NAMESPACE   NAME        READY   STATUS    RESTARTS   AGE",
      "default     junk.json   0/0     Invalid   0          5s",
      "demo        web         0/0     Invalid   0          5s",
      "",
    ].join("\n"),
  );
  expect(listed.stderr).toBe(
    `Invalid: junk.json is the manifest ${join(agent.manifests, "junk.json")}, not run (minikubelet describe pod junk.json -n default)\n` +
      `Invalid: web is the manifest ${file}, not run (minikubelet describe pod web -n demo)\n`,
  );

  const described = await capture((out) => describeCommand("pod", "web", { db: agent.db, namespace: "demo" }, { clock: agent.clock, stdout: out, utcOffsetMinutes: 0 }));
  expect(described.stdout).toContain(`Manifest:    ${file}\n`);
  expect(described.stdout).toContain("Reason:      Invalid\n");
  // Every problem with its field path; the unknown field, a warning alone, explains the missing command.
  expect(described.stdout).toContain(
    'Problems:\n  unknown field "spec.containers[0].comand"\n  spec.containers[0].image: required\n' +
      "  spec.containers[0]: required: command or args: the process runtime has no image to supply them; args alone run as the command (args[0] the program)\nEvents:\n",
  );
  expect(described.stdout).toContain(
    `Warning  Invalid  5s    kubelet  manifest ${file} is invalid, not run until it is fixed: unknown field "spec.containers[0].comand"; spec.containers[0].image: required`,
  );

  const events = await capture((out) => eventsCommand({ db: agent.db, for: "pod/web" }, { clock: agent.clock, stdout: out }));
  expect(events.stdout).toContain(`Warning   Invalid   pod/web   manifest ${file} is invalid`);

  // Fixed: the row goes, the event stays in the history.
  writeFileSync(file, BAD_WEB.replace("comand", "image: busybox\n      command"));
  agent.watcher.scan();
  const after = await capture((out, err) => getCommand("pods", undefined, { db: agent.db, namespace: "demo" }, { clock: agent.clock, stdout: out, stderr: err }));
  expect(after).toEqual({ code: 0, stdout: "", stderr: "No resources found in demo namespace.\n" });
  expect((await capture((out) => eventsCommand({ db: agent.db, for: "pod/web" }, { clock: agent.clock, stdout: out }))).stdout).toContain("Invalid");

  // Removed: its row goes too.
  rmSync(join(agent.manifests, "junk.json"));
  agent.watcher.scan();
  const none = await capture((out, err) => getCommand("pods", undefined, { db: agent.db, allNamespaces: true }, { clock: agent.clock, stdout: out, stderr: err }));
  expect(none).toEqual({ code: 0, stdout: "", stderr: "No resources found\n" });
  agent.database.close();
});

test("rows are replaced in one transaction; an unchanged problem keeps its row and first-seen time", () => {
  using dir = tempDir();
  const agent = agentOn(dir.path);
  const entry: RefusedManifest = {
    file: "/m/web.yaml",
    uid: "u1",
    namespace: "default",
    name: "web",
    reason: "Invalid",
    message: "web.yaml: spec: required",
    issues: [{ path: ["spec"], message: "required" }],
  };
  agent.store.saveRefusedManifests([entry], [], refusedPodObject);
  const revision = () => agent.database.db.query("SELECT revision, first_seen_at FROM invalid_manifests").all();
  const first = revision();
  agent.clock.step(1000);
  agent.store.saveRefusedManifests([entry], [], refusedPodObject);
  expect(revision()).toEqual(first);
  agent.store.saveRefusedManifests([], [], refusedPodObject);
  expect(revision()).toEqual([]);
  agent.database.close();
});

test("get -w prints a file turning bad as an Invalid row", async () => {
  using dir = tempDir();
  const agent = agentOn(dir.path);
  agent.watcher.scan();
  const seen: string[] = [];
  const controller = new AbortController();
  const watching = watchPods({
    db: agent.db,
    namespace: "demo",
    name: undefined,
    clock: agent.clock,
    signal: controller.signal,
    intervalMs: 100,
    onPod: (p) => seen.push(`${p.metadata.name} ${p.status?.reason}`),
  });
  writeFileSync(join(agent.manifests, "web.yaml"), BAD_WEB);
  agent.watcher.scan();
  for (let i = 0; i < 20 && seen.length === 0; i++) {
    agent.clock.step(100);
    await new Promise((r) => setTimeout(r, 5));
  }
  controller.abort();
  await watching;
  expect(seen).toEqual(["web Invalid"]);
  agent.database.close();
});
