import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseDescribeText } from "../../src/tools/review/describe-text.ts";
import { loadReviewFile, parseReviewText } from "../../src/tools/review/load.ts";
import { reviewTarget } from "../../src/tools/review/reviewer.ts";
import { storeHistory } from "../../src/tools/review/store-history.ts";
import { reviewCommand } from "../../src/cli/review.ts";
import { openAgentDatabase } from "../../src/store/open.ts";
import { SqliteStore } from "../../src/store/pod-store.ts";
import { openStoreReader } from "../../src/store/reader.ts";
import { harness } from "../kubelet-harness.ts";
import { container, desired, pod, probe } from "../pod-builder.ts";
import { ScriptedProber } from "../scripted-prober.ts";
import { tempDir } from "../store-fixtures.ts";

const DESCRIBE = join(import.meta.dir, "../fixtures/review/describe");

describe("--describe: the text of a real kubectl describe pod", () => {
  // kubectl 1.33 describing a pod of our agent whose liveness (tcp-socket, period 2s) killed it while nothing listened.
  const text = readFileSync(join(DESCRIBE, "slow-liveness.txt"), "utf8");

  test("restart count, kills and Unhealthy counts (with their xN repeats), the last killed attempt's run time", () => {
    expect(parseDescribeText(text)).toEqual(
      new Map([["app", { restartCount: 6, livenessKills: 7, startupKills: 0, unhealthy: { readiness: 21, liveness: 21 }, killedAfterSeconds: [4] }]]),
    );
  });

  test("an Unhealthy event is given to the one container with that probe; a Killing event names its container", () => {
    const twoContainers = `Containers:
  web:
    Restart Count:  2
    Liveness:       http-get http://:8080/livez delay=0s timeout=1s period=10s #success=1 #failure=3
  proxy:
    Restart Count:  0
    Readiness:      tcp-socket :15000 delay=0s timeout=1s period=10s #success=1 #failure=3
Events:
  Type     Reason     Age                From     Message
  ----     ------     ----               ----     -------
  Warning  Unhealthy  5s (x6 over 1m)    kubelet  Liveness probe failed: HTTP probe failed with statuscode: 500
  Warning  Unhealthy  3s                 kubelet  Readiness probe failed: dial tcp 10.0.0.2:15000: connect: connection refused
  Normal   Killing    5s (x2 over 1m)    kubelet  Container web failed liveness probe, will be restarted
`;
    const history = parseDescribeText(twoContainers);
    expect(history.get("web")).toMatchObject({ restartCount: 2, livenessKills: 2, unhealthy: { liveness: 6 } });
    expect(history.get("proxy")).toMatchObject({ restartCount: 0, livenessKills: 0, unhealthy: { readiness: 1 } });
  });

  test("backs the review: a slow starter killed by liveness gets the finding, with what happened", () => {
    const [target] = loadReviewFile(join(DESCRIBE, "slow.yaml")).targets;
    expect(reviewTarget(target!).findings).toEqual([]);
    const [finding] = reviewTarget(target!, parseDescribeText(text)).findings;
    expect(finding!.id).toBe("liveness-without-startup-probe");
    expect(finding!.message).toContain("liveness killed it 7 times and the last kill came 4 s after start, while it was still starting, inside the startup budget you do not have");
    expect(finding!.evidence).toEqual(["liveness killed it 7 times; the last kill came 4 s after start", "liveness probe failed 21 times (Unhealthy events)", "restart count 6"]);
  });

  test("the command: exit 1 with the finding; a text that is no describe output is refused", () => {
    const out: string[] = [];
    const output = { out: (line: string) => void out.push(line), err: () => {} };
    expect(reviewCommand(join(DESCRIBE, "slow.yaml"), { describe: join(DESCRIBE, "slow-liveness.txt") }, output)).toBe(1);
    expect(out.join("")).toContain("          seen: liveness killed it 7 times; the last kill came 4 s after start\n");
    expect(() => reviewCommand(join(DESCRIBE, "slow.yaml"), { describe: join(DESCRIBE, "slow.yaml") }, output)).toThrow("no Containers section found");
  });

  test("a describe text of another pod's containers is named on stderr, not used silently", () => {
    const err: string[] = [];
    const output = { out: () => {}, err: (line: string) => void err.push(line) };
    expect(reviewCommand(join(import.meta.dir, "../../examples/web.yaml"), { describe: join(DESCRIBE, "slow-liveness.txt") }, output)).toBe(0);
    expect(err).toEqual(["Warning: the pod's containers (app) are not in the reviewed manifests (web): no evidence used\n"]);
  });
});

describe("--db --pod: events and attempts from our database", () => {
  test("liveness kills recorded by the loop back the same finding, with each attempt's run time", async () => {
    using dir = tempDir();
    const dbPath = join(dir.path, "state.db");
    const agent = openAgentDatabase(dbPath);
    let store: SqliteStore | undefined;
    let prober!: ScriptedProber;
    const h = harness({
      baseSeconds: 1,
      capSeconds: 2,
      store: { savePod: (...args) => store!.savePod(...args), deletePod: (...args) => store!.deletePod(...args) },
      probeRunner: (runtime, clock) => (prober = new ScriptedProber(runtime, clock)),
    });
    store = new SqliteStore({ db: agent.db, clock: h.clock });
    const tcp = { type: "tcpSocket" as const, host: "", port: 8080 };
    const web = pod({ containers: [container("web", { ports: [{ containerPort: 8080, protocol: "TCP" }], livenessProbe: probe(tcp, { periodSeconds: 2 }) })] });
    prober.scripts.set("web/liveness", () => ({ ok: false, message: "dial tcp 127.0.0.1:8080: connect: connection refused" }));
    await h.kubelet.sync(desired(web));
    await h.advance(20);
    const kills = h.events.filter((event) => event.reason === "Killing").length;
    expect(kills).toBeGreaterThanOrEqual(2);

    using reader = openStoreReader(dbPath);
    const history = storeHistory(reader.store, "web-lab")!.get("web")!;
    expect(history.livenessKills).toBe(kills);
    expect(history.unhealthy.liveness).toBe(h.events.filter((event) => event.reason === "Unhealthy").length);
    // Each attempt is probed at once, then every 2s: the third failure, and the kill, at 4s.
    expect(history.killedAfterSeconds).toEqual(Array<number>(kills).fill(4));
    expect(storeHistory(reader.store, "nobody")).toBeUndefined();

    const manifest = parseReviewText(
      "kind: Pod\nmetadata: {name: web}\nspec:\n  containers:\n    - name: web\n      ports: [{containerPort: 8080}]\n      readinessProbe: {httpGet: {path: /readyz, port: 8080}}\n      livenessProbe: {tcpSocket: {port: 8080}, periodSeconds: 2}\n",
      "web.yaml",
      "yaml",
    );
    const findings = reviewTarget(manifest.targets[0]!, storeHistory(reader.store, "web-lab")).findings;
    expect(findings.map((finding) => finding.id)).toEqual(["liveness-without-startup-probe"]);
    expect(findings[0]!.evidence![0]).toBe(`liveness killed it ${kills} times; each kill came 4 s after start`);
    h.kubelet.stop();
    agent.db.close();
  });
});
