import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sqlCommand } from "../../src/cli/sql.ts";
import { logsCommand } from "../../src/cli/logs/logs.ts";
import { acquireAgentLock } from "../../src/store/agent-lock.ts";
import { resolveDbPath } from "../../src/store/db-path.ts";
import { MIGRATIONS, type Migration } from "../../src/store/migrations.ts";
import { migrate, openAgentDatabase, openReadonlyDatabase } from "../../src/store/open.ts";
import { listPodsFromStore, watchPods } from "../../src/store/pods-view.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";
import { servedPod } from "../../src/kubelet/status/pod-status.ts";

describe("migrations", () => {
  test("an empty database gets every migration, recorded with its sha256, and WAL + synchronous=NORMAL", () => {
    using dir = tempDir();
    const agent = openAgentDatabase(join(dir.path, "state.db"));
    const applied = agent.db.query("SELECT version, name, length(sha256) AS len FROM schema_migrations").all();
    expect(applied).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, len: 64 })));
    expect(agent.db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(agent.db.query("PRAGMA synchronous").get()).toEqual({ synchronous: 1 });
    expect(agent.db.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
    agent.close();
  });

  const next: Migration = { version: Math.max(...MIGRATIONS.map((m) => m.version)) + 1, name: "9999_test.sql", sql: "ALTER TABLE pods ADD COLUMN note TEXT;" };

  test("a database at the previous version is migrated, keeping its rows", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.db");
    const old = openAgentDatabase(path);
    old.db.run("INSERT INTO backoff (key, pod_uid, delay_ms, updated_at) VALUES ('u/c', 'u', 10000, 1)");
    old.close();
    const agent = openAgentDatabase(path, [...MIGRATIONS, next]);
    expect(agent.db.query("SELECT max(version) AS v FROM schema_migrations").get()).toEqual({ v: next.version });
    expect(agent.db.query("SELECT key, note FROM backoff JOIN pods ON 1 = 1 UNION ALL SELECT key, NULL FROM backoff").all()).toEqual([{ key: "u/c", note: null }]);
    agent.close();
  });

  test("a database from a newer version is refused, naming the unknown migration", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.db");
    openAgentDatabase(path, [...MIGRATIONS, next]).close();
    expect(() => openAgentDatabase(path)).toThrow(`has migration 9999_test.sql (version ${next.version}) that this minikubelet does not know`);
    expect(() => openReadonlyDatabase(path)).toThrow("written by a newer version");
  });

  test("an applied migration whose text changed is refused", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.db");
    openAgentDatabase(path).close();
    const edited = MIGRATIONS.map((m) => (m.version === 1 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    expect(() => openAgentDatabase(path, edited)).toThrow("migration 0001_init.sql applied to");
  });

  test("readers refuse a database older than the binary instead of migrating it", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.db");
    const db = new Database(path, { create: true });
    migrate(db, path, MIGRATIONS);
    db.close();
    expect(() => openReadonlyDatabase(path, [...MIGRATIONS, next])).toThrow('start "minikubelet run" once to migrate it');
  });
});

describe("checkpoints", () => {
  test("savePod is atomic: a statement failing mid-transaction leaves the previous pass, and writes it all when handed again", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    await h.kubelet.sync(desired(crash));
    const before = h.agent.db.query("SELECT phase, revision, record_json FROM pods").all();
    const containersBefore = h.agent.db.query("SELECT * FROM containers").all();
    // The event insert is the last statement of the pass: the pod and container rows were already written.
    h.agent.db.run("CREATE TRIGGER crash_mid_pass BEFORE INSERT ON events WHEN NEW.reason = 'Exited' BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    const record = h.pod(crash.key)!;
    record.app[0]!.state = "terminated";
    record.app[0]!.terminated = { containerId: record.app[0]!.containerId!, exitCode: 1, reason: "Error", finishedAt: h.clock.now() };
    const exited = { ...h.events[0]!, reason: "Exited", message: "Container crash exited with code 1 (Error)", type: "Warning" as const };
    expect(() => h.store.savePod(record, servedPod(record, { runtimeName: "fake" }), [exited], [])).toThrow("injected failure");
    expect(h.agent.db.query("SELECT phase, revision, record_json FROM pods").all()).toEqual(before);
    expect(h.agent.db.query("SELECT * FROM containers").all()).toEqual(containersBefore);
    expect(h.agent.db.query("SELECT count(*) AS n FROM attempts WHERE finished_at IS NOT NULL").get()).toEqual({ n: 0 });
    h.agent.db.run("DROP TRIGGER crash_mid_pass");
    // The loop keeps the events of a failed save and hands them again (kubelet-store-failure.test.ts).
    h.store.savePod(record, servedPod(record, { runtimeName: "fake" }), [exited], []);
    expect(h.agent.db.query("SELECT reason FROM events WHERE reason = 'Exited'").all()).toEqual([{ reason: "Exited" }]);
    expect(h.agent.db.query("SELECT exit_code FROM attempts").all()).toEqual([{ exit_code: 1 }]);
    h.agent.close();
  });

  test("a pass that changes nothing writes nothing (no transaction, the rows keep their updated_at); a change is written", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    const web = pod({ name: "web", containers: [container("app")] });
    await h.kubelet.sync(desired(web));
    const changes = () => (h.agent.db.query("SELECT total_changes() AS n").get() as { n: number }).n;
    const rows = () => h.agent.db.query("SELECT updated_at, revision, record_json FROM pods").all();
    const before = { changes: changes(), rows: rows() };
    h.clock.step(30_000);
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired(web));
    expect({ changes: changes(), rows: rows() }).toEqual(before);
    const id = h.pod(web.key)!.app[0]!.containerId!;
    h.runtime.finish(id, 1);
    await h.kubelet.idle();
    expect(changes()).toBeGreaterThan(before.changes);
    expect(h.agent.db.query("SELECT count(*) AS n FROM attempts WHERE exit_code = 1").get()).toEqual({ n: 1 });
    h.agent.close();
  });

  test("loadState gives back live pods and back-off entries; deleted pods stay for describe but leave get", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const crash = pod({ name: "crash", containers: [container("crash")] });
    const web = pod({ name: "web" });
    await h.kubelet.sync(desired(crash, web));
    await h.advance(30);
    const state = h.store.loadState();
    expect(state.pods.map((p) => p.spec.key).sort()).toEqual(["demo/crash-lab", "demo/web-lab"]);
    expect(restartCountOf(state.pods.find((p) => p.spec.name === "crash")!.app[0]!)).toBe(restartCountOf(h.pod(crash.key)!.app[0]!));
    expect(state.backoff).toEqual(h.kubelet.backoff.all().map((e) => ({ ...e })));
    await h.kubelet.sync(desired(crash));
    await h.advance(35);
    expect((await listPodsFromStore({ db: h.dbPath, namespace: "demo", name: undefined })).map((p) => p.metadata.name)).toEqual(["crash-lab"]);
    expect(h.agent.db.query("SELECT name FROM pods WHERE deleted_at IS NOT NULL").all()).toEqual([{ name: "web-lab" }]);
    expect(h.store.loadState().pods.map((p) => p.spec.name)).toEqual(["crash"]);
    h.agent.close();
  });

  test("a pass that changes nothing does not raise the pod's revision (get -w stays quiet)", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    const web = pod({ name: "web" });
    await h.kubelet.sync(desired(web));
    const revision = () => h.agent.db.query("SELECT revision FROM pods").get();
    const first = revision();
    await h.kubelet.sync(desired(web));
    await h.kubelet.sync(desired(web));
    expect(revision()).toEqual(first);
    h.agent.close();
  });

  test("get -w hands over each pod whose object changed, read beside the writing agent", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
    const controller = new AbortController();
    const seen: string[] = [];
    const watching = watchPods({
      db: h.dbPath,
      namespace: "demo",
      name: undefined,
      clock: h.clock,
      signal: controller.signal,
      onPod: (p) => seen.push(`${p.status?.containerStatuses?.[0]?.restartCount} ${p.status?.containerStatuses?.[0]?.state?.waiting?.reason ?? p.status?.containerStatuses?.[0]?.state?.terminated?.reason ?? "Running"}`),
    });
    await h.advance(13);
    controller.abort();
    await watching;
    // Exit at 1s and an immediate restart, exit at 2s shown through its 10s back-off, restart at 12s.
    expect(seen).toEqual(["1 Running", "1 Error", "2 Running"]);
    h.agent.close();
  });
});

describe("one agent per database", () => {
  test("a second agent is refused, naming the live pid; a stale lock from a dead agent is taken over", async () => {
    using dir = tempDir();
    const path = join(dir.path, "state.db");
    const child = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const held = acquireAgentLock(path, child.pid!);
      expect(() => openAgentDatabase(path)).toThrow(`in use by another minikubelet agent (pid ${child.pid}`);
      // What a kill -9'd holder leaves: the kernel drops its flock, its file stays behind.
      held.release();
      writeFileSync(`${path}.lock`, `${child.pid} 1\n`);
    } finally {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    // The holder is dead now (like an agent after kill -9): the next start takes the lock.
    const agent = openAgentDatabase(path);
    expect(existsSync(`${path}.lock`)).toBe(true);
    agent.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});

describe("sql and logs", () => {
  test("sql prints an aligned table or JSON, and SQLite refuses a write on its read-only connection", async () => {
    using dir = tempDir();
    const h = storeHarness(dir.path);
    await h.kubelet.sync(desired(pod({ name: "web" })));
    let out = "";
    await sqlCommand("SELECT name, phase, deleted_at FROM pods", { db: h.dbPath }, { stdout: (t) => (out += t) });
    expect(out).toBe("NAME      PHASE     DELETED_AT\nweb-lab   Running   NULL\n");
    out = "";
    await sqlCommand("SELECT container, attempt FROM attempts", { db: h.dbPath, output: "json" }, { stdout: (t) => (out += t) });
    expect(JSON.parse(out)).toEqual([{ container: "web", attempt: 0 }]);
    await expect(sqlCommand("DELETE FROM pods", { db: h.dbPath }, { stdout: () => {} })).rejects.toThrow("readonly database");
    expect(h.agent.db.query("SELECT count(*) AS n FROM pods").get()).toEqual({ n: 1 });
    h.agent.close();
  });

  test("every reader on a missing database says so in one line", async () => {
    using dir = tempDir();
    const path = join(dir.path, "none.db");
    const message = `state database ${path} does not exist (start "minikubelet run" first, or pass --db PATH)`;
    await expect(sqlCommand("SELECT 1", { db: path })).rejects.toThrow(message);
    await expect(logsCommand("web", { db: path })).rejects.toThrow(message);
    await expect(listPodsFromStore({ db: path, namespace: undefined, name: undefined })).rejects.toThrow(message);
    expect(existsSync(path)).toBe(false);
  });

  test("logs reads the current or previous attempt's file from the attempts table, with --tail", async () => {
    using dir = tempDir();
    const logDir = join(dir.path, "logs");
    mkdirSync(logDir);
    const h = storeHarness(dir.path, { logPathOf: (_uid, id) => join(logDir, id) });
    h.runtime.behaviours.set("crash", { exitAfterMs: 1000, exitCode: 1 });
    const origStart = h.runtime.startContainer.bind(h.runtime);
    h.runtime.startContainer = async (config) => {
      const id = await origStart(config);
      writeFileSync(join(logDir, id), `line 1 of attempt ${config.attempt}\nline 2 of attempt ${config.attempt}\n`);
      return id;
    };
    await h.kubelet.sync(desired(pod({ name: "crash", containers: [container("crash")] })));
    await h.advance(1.5);
    let out = "";
    await logsCommand("crash-lab", { db: h.dbPath }, { stdout: (t) => (out += t) });
    expect(out).toBe("line 1 of attempt 1\nline 2 of attempt 1\n");
    out = "";
    await logsCommand("crash-lab", { db: h.dbPath, previous: true, tail: "1" }, { stdout: (t) => (out += t) });
    expect(out).toBe("line 2 of attempt 0\n");
    await expect(logsCommand("crash-lab", { db: h.dbPath, container: "nope" })).rejects.toThrow("container nope is not valid for pod crash-lab");
    h.agent.close();
  });
});

test("db path: --db, then $MINIKUBELET_DB, then the system path as root, then the XDG state directory", () => {
  expect(resolveDbPath("/tmp/x.db", { env: { MINIKUBELET_DB: "/y.db" } })).toBe("/tmp/x.db");
  expect(resolveDbPath(undefined, { env: { MINIKUBELET_DB: "/y.db" }, uid: 0 })).toBe("/y.db");
  expect(resolveDbPath(undefined, { env: {}, uid: 0 })).toBe("/var/lib/minikubelet/state.db");
  expect(resolveDbPath(undefined, { env: { XDG_STATE_HOME: "/s" }, uid: 1000 })).toBe("/s/minikubelet/state.db");
  expect(resolveDbPath(undefined, { env: {}, uid: 1000, home: "/home/u" })).toBe("/home/u/.local/state/minikubelet/state.db");
});
