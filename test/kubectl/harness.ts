/**
 * Real kubectl against our API. Finds kubectl (the PATH one, which on these machines is gcloud's
 * dispatcher picking `kubectl.1.<minor>` from /version, and the versioned binaries beside it),
 * serves a database's API in this process (or points at an agent's), writes a kubeconfig the way
 * `minikubelet kubeconfig` does into a temp folder with its own --cache-dir, and runs kubectl with
 * a timeout. Nothing reads ~/.kube: HOME is the temp folder too.
 *
 * Without kubectl the kubectl tests are skipped visibly; under CI=true a missing kubectl fails.
 */
import { afterAll, beforeAll } from "bun:test";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import type { ApiLimits } from "../../src/api/http/context.ts";
import { startApi, type RunningApi } from "../../src/api/start.ts";
import { kubeconfigText } from "../../src/cli/kubeconfig.ts";
import type { Clock } from "../../src/clock.ts";
import type { Runtime } from "../../src/runtime/runtime.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { describeNeeding } from "../requirements.ts";

const VERSIONED_DIR = "/usr/lib/google-cloud-sdk/bin";

/** The kubectl binaries found: `default` is the PATH one; `versions` maps "1.27" to its binary. */
export interface KubectlBinaries {
  default: string | undefined;
  versions: Record<string, string>;
}

export function findKubectl(): KubectlBinaries {
  const onPath = (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "kubectl")).find((path) => existsSync(path));
  const versions: Record<string, string> = {};
  for (let minor = 20; minor <= 40; minor++) {
    const path = join(VERSIONED_DIR, `kubectl.1.${minor}`);
    if (existsSync(path)) versions[`1.${minor}`] = path;
  }
  return { default: onPath, versions };
}

export const KUBECTL = findKubectl();

/** What every kubectl test runs against: the dispatcher users run, and the oldest and newest kubectl we support. */
export const KUBECTLS_UNDER_TEST: readonly (readonly [label: string, binary: string | undefined])[] = [
  ["dispatcher", KUBECTL.default],
  ["kubectl 1.27", KUBECTL.versions["1.27"]],
  ["kubectl 1.33", KUBECTL.versions["1.33"]],
];

/** `describe` for tests that need `binary` (undefined: not installed); see requirements.ts. */
export function describeWithKubectl(name: string, binary: string | undefined, body: (kubectl: string) => void): void {
  describeNeeding(name, binary ? undefined : `no kubectl on PATH or in ${VERSIONED_DIR} (Debian's kubernetes-client)`, () => body(binary ?? ""));
}

export interface KubectlResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A temp folder with a kubeconfig, a cache dir and a HOME, for one API. */
export class KubectlSession {
  readonly dir = mkdtempSync(join(tmpdir(), "minikubelet-kubectl-"));
  readonly kubeconfig = join(this.dir, "kubeconfig");
  readonly cacheDir = join(this.dir, "cache");

  /** `kubeconfig` defaults to what `minikubelet kubeconfig --db dbPath` prints. */
  constructor(dbPath: string, kubeconfig = kubeconfigText(dbPath)) {
    writeFileSync(this.kubeconfig, kubeconfig, { mode: 0o600 });
  }

  /** This session's kubeconfig with another token, for refusals. */
  kubeconfigWithToken(token: string): string {
    return readFileSync(this.kubeconfig, "utf8").replace(/^(\s+token: ).*$/m, `$1${token}`);
  }

  /** Runs `binary args...` with this session's --kubeconfig and --cache-dir (and `env`, e.g. EDITOR); kills it after `timeoutMs`. */
  run(binary: string, args: string[], options: { timeoutMs?: number; stdin?: string; env?: Record<string, string> } = {}): Promise<KubectlResult> {
    const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: this.dir, TZ: "UTC", NO_COLOR: "1", ...options.env };
    const child = spawn(binary, ["--kubeconfig", this.kubeconfig, "--cache-dir", this.cacheDir, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += String(chunk)));
    child.stderr.on("data", (chunk) => (stderr += String(chunk)));
    child.stdin.end(options.stdin ?? "");
    const timer = setTimeout(() => {
      stderr += `\n[harness: killed after ${options.timeoutMs ?? 30_000} ms]`;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 30_000);
    return new Promise((resolve) => {
      child.once("close", (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  [Symbol.dispose](): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface ServedApi extends RunningApi {
  commits: CommitBroadcast;
}

/**
 * The API of the database at `dbPath` served in this process on a free loopback port, as `serve`
 * would (no runtime unless given); `commits` is the feed a test publishes revisions on.
 */
export function serveDatabase(dbPath: string, options: { nodeName?: string; runtime?: Runtime; limits?: ApiLimits; commits?: CommitBroadcast; clock?: Clock } = {}): ServedApi {
  const commits = options.commits ?? new CommitBroadcast();
  const { nodeName = "lab", runtime, limits, clock } = options;
  const api = startApi({ dbPath, listen: { hostname: "127.0.0.1", port: 0 }, nodeName, commits, runtime, limits, clock, log: () => {} });
  return { ...api, commits };
}

/**
 * For a test file: an empty database served in this process from beforeAll to afterAll, with a
 * kubectl session on it (read `session` inside tests: it exists once beforeAll ran).
 */
export function servedEmptyDatabase(prefix: string): { readonly dbPath: string; readonly session: KubectlSession } {
  const dir = tempDir(prefix);
  const dbPath = join(dir.path, "state.db");
  let api: ServedApi | undefined;
  let session: KubectlSession | undefined;
  beforeAll(() => {
    openAgentDatabase(dbPath).close();
    api = serveDatabase(dbPath);
    session = new KubectlSession(dbPath);
  });
  afterAll(async () => {
    await api?.stop();
    session?.[Symbol.dispose]();
    dir[Symbol.dispose]();
  });
  return {
    dbPath,
    get session() {
      return session!;
    },
  };
}

/**
 * A kubelet on the fake runtime and a fake clock (test/store-fixtures.ts's storeHarness) whose
 * store tells the API of each commit, as `run` wires it, and a kubectl session on that API: for
 * kubectl tests that step the clock instead of waiting on real processes.
 */
export function fakeAgentWithApi(dir: string, options: Parameters<typeof storeHarness>[1] & { nodeName?: string } = {}) {
  const commits = new CommitBroadcast();
  const h = storeHarness(dir, { ...options, onCommit: (revision) => commits.publish(revision) });
  const api = serveDatabase(h.dbPath, { nodeName: options.nodeName, runtime: h.runtime, commits, clock: h.clock });
  const session = new KubectlSession(h.dbPath);
  return {
    ...h,
    api,
    session,
    async [Symbol.asyncDispose]() {
      await api.stop();
      session[Symbol.dispose]();
      h.agent.close();
    },
  };
}

/**
 * The compiled agent (`run`, see test/e2e/helpers.ts) serving its API on a free port, and a kubectl
 * session from its `minikubelet kubeconfig`. Resolves once the API answers.
 */
export async function startAgentWithApi(ws: Workspace, extra: string[] = []): Promise<{ agent: Agent; session: KubectlSession; url: string }> {
  ensureBinary();
  const agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", ...extra]);
  const url = await waitFor("the API address in the run banner", () => /minikubelet: api +(https:\/\/\S+)/.exec(agent.stderr)?.[1], 15_000, () => agent.stderr);
  const session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
  return { agent, session, url };
}

/** The compiled agent and a kubectl session on its API, once useAgentWithApi's beforeAll has run. */
export interface AgentWithApi {
  ws: Workspace;
  agent: Agent;
  session: KubectlSession;
  url: string;
}

/**
 * Registers the hooks of a file (or describe) whose tests share one compiled agent: beforeAll fills
 * a workspace (`prepare`: manifests), starts `run --stop-pods-on-exit` serving its API and opens a
 * kubectl session; afterAll stops the agent (its pods' grace periods may take a while) and removes
 * what it made. The handle's fields are set once beforeAll has run.
 */
export function useAgentWithApi(prepare: (ws: Workspace) => void = () => {}, extra: string[] = []): AgentWithApi {
  const handle = {} as AgentWithApi;
  beforeAll(async () => {
    handle.ws = new Workspace();
    prepare(handle.ws);
    Object.assign(handle, await startAgentWithApi(handle.ws, ["--stop-pods-on-exit", ...extra]));
  }, 120_000);
  afterAll(async () => {
    await handle.agent?.terminate();
    handle.session?.[Symbol.dispose]();
    handle.ws?.cleanup();
  }, 60_000);
  return handle;
}
