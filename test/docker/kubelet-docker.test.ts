/**
 * The sync loop on the real DockerRuntime (issue 6's and issue 8's loop-level "Done when"): real
 * pause sandboxes, real exits from the engine's event stream, real probes against the pod IP.
 * Each test's pods live in namespace mk-test under names no other run uses; the harness's shutdown
 * removes them, and `afterEach` removes anything left by their pod-uid label.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { realClock } from "../../src/clock.ts";
import type { KubeEvent } from "../../src/v1/kube-event.ts";
import type { PodSpec, Volume } from "../../src/manifest/types.ts";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { ProbeManager } from "../../src/prober/probe-manager.ts";
import { Prober } from "../../src/prober/prober.ts";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { LABEL } from "../../src/runtime/labels.ts";
import { desired, pod, type PodOptions } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { bbContainer as bb, BUSYBOX, describeDocker, docker, PAUSE, REGISTRY, REGISTRY_BUSYBOX } from "./helpers.ts";
import { restartCountOf } from "../../src/kubelet/pod-state.ts";

const RUN = randomBytes(3).toString("hex");

let volumeRoot: string;
let runtime: DockerRuntime;
let h: ReturnType<typeof realHarness>;
const created: PodSpec[] = [];

beforeEach(() => {
  volumeRoot = mkdtempSync(join(tmpdir(), "mk-kubelet-docker-"));
  runtime = new DockerRuntime({ pauseImage: PAUSE, volumeRoot });
  const probes = new ProbeManager({ runner: new Prober({ clock: realClock, exec: (id, cmd, t) => runtime.execSync(id, cmd, t) }), clock: realClock });
  h = realHarness(runtime, { probes, baseSeconds: 0.4, capSeconds: 1.6 });
});

afterEach(async () => {
  await h.close();
  for (const spec of created.splice(0)) {
    const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${spec.uid}`] } });
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  }
  rmSync(volumeRoot, { recursive: true, force: true });
});


/** A pod in mk-test with a name and uid unique to this run, recorded for cleanup. */
function mkPod(name: string, options: PodOptions & { volumes?: Volume[] } = {}): PodSpec {
  const spec = pod({ namespace: "mk-test", node: "", grace: 1, ...options, name: `${name}-${RUN}` });
  spec.uid = `${RUN}-${name}`;
  spec.configHash = `hash-${RUN}-${name}`;
  spec.volumes = options.volumes ?? [];
  created.push(spec);
  return spec;
}

/** A pod from YAML through the real validator, with a uid unique to this run. */
function yamlPod(name: string, yaml: string): PodSpec {
  const spec = validatePod(parse(yaml), { file: `${name}.yaml`, source: `/mk-test/${RUN}/${name}.yaml`, node: "" });
  created.push(spec);
  return spec;
}

const of = (reason: string, container?: string) => (e: KubeEvent) => e.reason === reason && (container === undefined || e.container === container);

describeDocker("the loop on the docker runtime", () => {
  test("init container writes the page into an emptyDir, the app serves it, readiness against the pod IP", async () => {
    const web = yamlPod(
      "web",
      `
apiVersion: v1
kind: Pod
metadata: { name: web-${RUN}, namespace: mk-test }
spec:
  terminationGracePeriodSeconds: 1
  volumes: [{ name: docroot, emptyDir: {} }]
  initContainers:
    - name: write-index
      image: ${BUSYBOX}
      imagePullPolicy: IfNotPresent
      command: [sh, -c, "echo 'hello from init' > /docroot/index.html"]
      volumeMounts: [{ name: docroot, mountPath: /docroot }]
  containers:
    - name: web
      image: ${BUSYBOX}
      imagePullPolicy: IfNotPresent
      command: [httpd, -f, -p, "8080", -h, /www]
      ports: [{ name: http, containerPort: 8080 }]
      volumeMounts: [{ name: docroot, mountPath: /www, readOnly: true }]
      readinessProbe:
        httpGet: { path: /index.html, port: http }
        periodSeconds: 1
`,
    );
    await h.kubelet.sync(desired(web));
    await h.event(of("Ready", "web"), 10_000, "Ready of web");
    await h.kubelet.idle(); // the conditions are computed at the end of the pass that flipped ready
    expect(h.events.filter(of("Started")).map((e) => e.container)).toEqual(["write-index", "web"]);
    expect(h.events.find(of("Exited", "write-index"))?.message).toBe("Container write-index exited with code 0 (Completed)");
    const record = h.kubelet.pods.get(web.key)!;
    expect(record.app[0]!.ready).toBe(true);
    expect(record.conditions.Ready?.status).toBe("True");
    const ip = record.sandbox!.ip;
    expect(ip).not.toBe("127.0.0.1");
    expect(await (await fetch(`http://${ip}:8080/index.html`)).text()).toBe("hello from init\n");
  });

  test("crash loop: the exit shown through the back-off, restarts counted, exit code 1", async () => {
    const crash = mkPod("crash", { containers: [bb("crash", "echo crashing; exit 1")] });
    const stateAtBackOff: string[] = [];
    h.kubelet.recorder.subscribe((e) => {
      if (e.reason === "BackOff") stateAtBackOff.push(h.kubelet.pods.get(crash.key)?.app[0]?.state ?? "none");
    });
    await h.kubelet.sync(desired(crash));
    const starts = await h.count(of("Started"), 3, 10_000);
    // First restart immediate, the second after the 0.4s base (measured from the engine's finish).
    expect(starts[2]!.at - starts[1]!.at).toBeGreaterThanOrEqual(350);
    // The pass that meets the back-off shows the exit; CrashLoopBackOff comes with the next.
    expect(stateAtBackOff[0]).toBe("terminated");
    expect(h.events.find(of("BackOff"))?.message).toBe(`Back-off restarting failed container crash in pod ${crash.fullName}`);
    expect(h.events.filter(of("Exited")).every((e) => e.message === "Container crash exited with code 1 (Error)")).toBe(true);
    const record = h.kubelet.pods.get(crash.key)!;
    expect(restartCountOf(record.app[0]!)).toBeGreaterThanOrEqual(2);
    expect(record.app[0]!.lastTermination?.exitCode).toBe(1);
    expect(record.phase).toBe("Running");
  });

  test("a PID 1 that ignores SIGTERM (sleep 300) is killed at the grace with 137 when the pod is removed", async () => {
    const sleeper = mkPod("sleeper", { grace: 1, containers: [bb("sleeper", "", { command: ["sleep", "300"] })] });
    await h.kubelet.sync(desired(sleeper));
    await h.event(of("Started", "sleeper"));
    const id = h.kubelet.pods.get(sleeper.key)!.app[0]!.containerId!;
    const began = Date.now();
    await h.kubelet.sync(desired());
    const exit = await h.event(of("Exited", "sleeper"), 8000);
    expect(exit.message).toBe("Container sleeper exited with code 137 (Error): killed with SIGKILL when its grace period ran out");
    // Grace 1s is below the 2s floor: SIGKILL lands about 2s after SIGTERM.
    expect(exit.at - began).toBeGreaterThanOrEqual(1900);
    expect(h.events.some(of("GraceExpired", "sleeper"))).toBe(true);
    await h.event(of("PodRemoved"), 5000);
    await expect(docker.getContainer(id).inspect()).rejects.toThrow();
  });

  test("hostPath readOnly refuses a write; the same path mounted read-write accepts one", async () => {
    const hostDir = mkdtempSync(join(tmpdir(), "mk-hostpath-"));
    try {
      const host: Volume = { name: "host", type: "hostPath", path: hostDir, hostPathType: "Directory" };
      const ro = mkPod("hostpath", {
        restartPolicy: "Never",
        volumes: [host],
        containers: [
          bb("ro", "echo no > /data/ro.txt", { volumeMounts: [{ name: "host", mountPath: "/data", readOnly: true }] }),
          bb("rw", "echo yes > /data/rw.txt", { volumeMounts: [{ name: "host", mountPath: "/data", readOnly: false }] }),
        ],
      });
      await h.kubelet.sync(desired(ro));
      const [roExit, rwExit] = await Promise.all([h.event(of("Exited", "ro")), h.event(of("Exited", "rw"))]);
      expect(roExit.message).toMatch(/^Container ro exited with code [1-9]\d* \(Error\)$/);
      expect(rwExit.message).toBe("Container rw exited with code 0 (Completed)");
      expect(existsSync(join(hostDir, "ro.txt"))).toBe(false);
      expect(await Bun.file(join(hostDir, "rw.txt")).text()).toBe("yes\n");
      await h.kubelet.idle();
      expect(h.kubelet.pods.get(ro.key)!.phase).toBe("Failed");
    } finally {
      rmSync(hostDir, { recursive: true, force: true });
    }
  });

  test("logs --previous: the previous dead container is kept and readable, older ones removed", async () => {
    const state: Volume = { name: "state", type: "emptyDir" };
    // Three quick crashes, then a fourth attempt that stays up.
    const counter = 'n=$(cat /state/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /state/n; echo "run $n"; [ $n -ge 4 ] && exec sleep 30; exit 1';
    const crash = mkPod("previous", {
      volumes: [state],
      containers: [bb("crash", counter, { volumeMounts: [{ name: "state", mountPath: "/state", readOnly: false }] })],
    });
    h.kubelet.stop();
    h = realHarness(runtime, { baseSeconds: 1.5, capSeconds: 3 });
    // The pass that meets the third exit shows it (its BackOff event): the third is the current
    // attempt and the second, lastState, the dead container kept. Any later pass in the wait (an
    // engine event a loaded machine delivers late) shows CrashLoopBackOff and removes the second, so
    // the loop is stopped in that pass while the logs are read, and started again for the fourth.
    let started = 0;
    h.kubelet.recorder.subscribe((e) => {
      if (e.reason === "Started") started++;
      if (e.reason === "BackOff" && started === 3) h.kubelet.stop();
    });
    await h.kubelet.sync(desired(crash));
    const starts = await h.count(of("Started"), 3, 10_000);
    await h.event((e) => e.reason === "BackOff" && e.at >= starts[2]!.at);
    await h.kubelet.idle();
    const { containerId: third, previousContainerId: second, lastTermination } = h.kubelet.pods.get(crash.key)!.app[0]!;
    expect(second).toBe(lastTermination!.containerId);
    expect(await Promise.all([runtime.readLogs(third!), runtime.readLogs(second!)])).toEqual(["run 3\n", "run 2\n"]);
    // Once the fourth runs, the third is the previous one; the first two are gone.
    h.kubelet.start();
    await h.kubelet.sync(desired(crash));
    await h.count(of("Started"), 4, 10_000);
    const record = h.kubelet.pods.get(crash.key)!.app[0]!;
    const current = record.containerId!;
    const previous = record.previousContainerId!;
    expect(previous).not.toBe(current);
    // The shell has written its line by the time it execs sleep; allow the log a moment to land.
    for (let tries = 0; (await runtime.readLogs(current)) !== "run 4\n"; tries++) {
      expect(tries).toBeLessThan(50);
      await Bun.sleep(20);
    }
    expect(await runtime.readLogs(previous)).toBe("run 3\n");
    const mine = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podUid}=${crash.uid}`, `${LABEL.sandbox}=false`] } });
    expect(mine.map((c) => c.Id).sort()).toEqual([current, previous].sort());
  });

  test("a native sidecar serves the app on 127.0.0.1; the Job-like pod succeeds and the sidecar is then stopped", async () => {
    // The trap first: as PID 1 the shell ignores a SIGTERM that arrives before it has a handler.
    const sidecar = bb("server", "trap 'exit 0' TERM; mkdir -p /www && echo sidecar-says-hi > /www/index.html && httpd -p 8081 -h /www; while true; do sleep 0.1; done", {
      restartPolicy: "Always",
    });
    const app = bb("app", "for i in $(seq 50); do wget -q -O - http://127.0.0.1:8081/ && exit 0; sleep 0.1; done; exit 1");
    const job = mkPod("sidecar", { restartPolicy: "Never", init: [sidecar], containers: [app] });
    await h.kubelet.sync(desired(job));
    expect((await h.event(of("Exited", "app"))).message).toBe("Container app exited with code 0 (Completed)");
    const appId = h.kubelet.pods.get(job.key)!.app[0]!.containerId!;
    expect(await runtime.readLogs(appId)).toBe("sidecar-says-hi\n");
    expect((await h.event(of("Exited", "server"), 8000)).message).toBe("Container server exited with code 0 (Completed)");
    await h.kubelet.idle();
    const record = h.kubelet.pods.get(job.key)!;
    expect(record.phase).toBe("Succeeded");
    expect(record.init[0]!.state).toBe("terminated");
    expect(restartCountOf(record.init[0]!)).toBe(0);
    expect(h.events.filter(of("Started")).map((e) => e.container)).toEqual(["server", "app"]);
  });
});

describeDocker(
  "image pulls in the loop (local registry)",
  () => {
    test("imagePullPolicy Always pulls from the registry: Pulling, then Pulled with the time taken", async () => {
      const pulled = mkPod("pull", { restartPolicy: "Never", containers: [bb("app", "echo pulled", { image: REGISTRY_BUSYBOX, imagePullPolicy: "Always" })] });
      await h.kubelet.sync(desired(pulled));
      await h.event(of("Exited", "app"), 15_000);
      const reasons = h.events.filter((e) => e.container === "app").map((e) => e.reason);
      expect(reasons.slice(0, 4)).toEqual(["Pulling", "Pulled", "Created", "Started"]);
      expect(h.events.find(of("Pulling"))?.message).toBe(`Pulling image "${REGISTRY_BUSYBOX}"`);
      expect(h.events.find(of("Pulled"))?.message).toMatch(new RegExp(`^Successfully pulled image "${REGISTRY_BUSYBOX.replace(/[.]/g, "\\.")}" in [0-9.]+m?s\\.`));
    });

    test("a missing tag: ErrImagePull, then ImagePullBackOff, then another attempt after the back-off", async () => {
      const image = `${REGISTRY}/minikubelet-test/busybox:missing-${RUN}`;
      const missing = mkPod("missing", { containers: [bb("app", "true", { image, imagePullPolicy: "IfNotPresent" })] });
      const waiting: string[] = [];
      h.kubelet.onPodSynced((p) => {
        const reason = p.app[0]?.waiting?.reason;
        if (p.spec.key === missing.key && reason && waiting.at(-1) !== reason) waiting.push(reason);
      });
      await h.kubelet.sync(desired(missing));
      const failures = await h.count((e) => e.reason === "Failed" && e.message === "Error: ErrImagePull", 2, 10_000);
      await h.kubelet.idle(); // the pass that failed the second pull has checkpointed its state
      const backOff = h.events.find((e) => e.reason === "BackOff" && e.container === "app")!;
      expect(backOff.message).toBe(`Back-off pulling image "${image}"`);
      expect(backOff.at).toBeGreaterThanOrEqual(failures[0]!.at);
      // The second pull waits out the 0.4s base from the first failure.
      expect(failures[1]!.at - failures[0]!.at).toBeGreaterThanOrEqual(350);
      expect(h.events.some((e) => e.reason === "Failed" && e.message.startsWith(`Failed to pull image "${image}"`))).toBe(true);
      expect(waiting.slice(0, 3)).toEqual(["ErrImagePull", "ImagePullBackOff", "ErrImagePull"]);
      expect(h.events.some(of("Started", "app"))).toBe(false);
    });
  },
  { registry: true },
);
