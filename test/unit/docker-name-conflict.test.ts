/**
 * A start whose attempt's name is already taken in the engine (a create that timed out but was
 * carried out, a record the agent lost). The attempt number is the kubelet's proof of how often a
 * container ran: a name that ran once is never run again under the same number.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Dockerode from "dockerode";
import { createAndStart, type ContainerEngine } from "../../src/runtime/docker-container-start.ts";
import { DEFAULT_LOG_POLICY } from "../../src/runtime/log-rotation-policy.ts";
import { ContainerStartError } from "../../src/runtime/runtime.ts";
import { container, pod } from "../pod-builder.ts";

const NEVER = "0001-01-01T00:00:00Z";

interface Existing {
  id: string;
  running: boolean;
  startedAt: string;
  owned: boolean;
}

function engineWith(existing: Existing) {
  const dir = mkdtempSync(join(tmpdir(), "minikubelet-conflict-"));
  const log: string[] = [];
  let taken = true;
  let created = 0;
  const conflict = Object.assign(new Error("(HTTP code 409) unexpected - Conflict. The container name is already in use"), {
    statusCode: 409,
    json: { message: `Conflict. The container name is already in use by container "${existing.id}"` },
  });
  const docker = {
    async createContainer(options: Dockerode.ContainerCreateOptions) {
      if (taken) {
        log.push(`create ${options.name}: conflict`);
        throw conflict;
      }
      const id = `new-${++created}`;
      log.push(`create ${options.name}: ${id}`);
      return { id, start: async () => void log.push(`start ${id}`) };
    },
    getContainer(name: string) {
      return {
        inspect: async () => ({
          Id: existing.id,
          Name: name,
          Config: { Labels: { owned: String(existing.owned) } },
          State: { Running: existing.running, StartedAt: existing.startedAt, Status: existing.running ? "running" : existing.startedAt === NEVER ? "created" : "exited" },
        }),
      };
    },
  } as unknown as Dockerode;
  const engine: ContainerEngine = {
    docker,
    volumeRoot: dir,
    owner: "db-1",
    logPolicy: DEFAULT_LOG_POLICY,
    nodeResources: {},
    owns: (labels) => labels.owned === "true",
    async remove(id) {
      log.push(`remove ${id}`);
      taken = false;
    },
    endpoint: () => "/var/run/docker.sock",
    started: (id) => void log.push(`told started ${id}`),
  };
  return { engine, log, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const web = pod({ name: "web" });
const config = { pod: web, container: container("app"), kind: "app" as const, attempt: 3, sandbox: { id: "sb", ip: "10.0.0.2", podUid: web.uid } };

describe("a start that finds its attempt's name taken", () => {
  test("one of ours created and never started is replaced, under the same number", async () => {
    const { engine, log, cleanup } = engineWith({ id: "old", running: false, startedAt: NEVER, owned: true });
    try {
      expect(await createAndStart(engine, config)).toBe("new-1");
      expect(log.filter((l) => !l.startsWith("create"))).toEqual(["remove old", "start new-1", "told started new-1"]);
    } finally {
      cleanup();
    }
  });

  test("one of ours still running is kept: a second copy never runs beside it", async () => {
    const { engine, log, cleanup } = engineWith({ id: "old", running: true, startedAt: "2026-12-02T10:00:00.5Z", owned: true });
    try {
      expect(await createAndStart(engine, config)).toBe("old");
      expect(log.some((l) => l.startsWith("remove") || l.startsWith("start"))).toBe(false);
    } finally {
      cleanup();
    }
  });

  test("one of ours that ran and ended is removed and the attempt fails: the number is not run twice", async () => {
    const { engine, log, cleanup } = engineWith({ id: "old", running: false, startedAt: "2026-12-02T10:00:00.5Z", owned: true });
    try {
      const error = await createAndStart(engine, config).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ContainerStartError);
      expect((error as ContainerStartError).reason).toBe("CreateContainerError");
      expect((error as Error).message).toContain("already ran");
      expect(log.filter((l) => !l.startsWith("create"))).toEqual(["remove old"]);
    } finally {
      cleanup();
    }
  });

  test("anyone else's is left alone and refused", async () => {
    const { engine, log, cleanup } = engineWith({ id: "theirs", running: false, startedAt: NEVER, owned: false });
    try {
      const error = await createAndStart(engine, config).then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(ContainerStartError);
      expect((error as Error).message).toContain("another agent's database");
      expect(log.some((l) => l.startsWith("remove"))).toBe(false);
    } finally {
      cleanup();
    }
  });
});
