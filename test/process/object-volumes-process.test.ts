/**
 * A cluster pod's Secret volume and env with real processes (the objects from a fake source): the
 * Secret's files are on a tmpfs (as root), the container reads them and its env, and the tmpfs is
 * unmounted with the pod.
 */
import { afterAll, afterEach, beforeEach, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validatePod } from "../../src/manifest/validation/validate.ts";
import { ProcessRuntime } from "../../src/runtime/process/process.ts";
import { isMountPoint } from "../../src/runtime/process/process-tmpfs.ts";
import { desired } from "../pod-builder.ts";
import { realHarness } from "../real-harness.ts";
import { testCgroupIdentities } from "../host-cgroups.ts";
import { FakePodObjects } from "../fake-pod-objects.ts";
import { rootMissing, testNeeding } from "../requirements.ts";

const cgroups = testCgroupIdentities();
afterAll(() => cgroups.cleanup());

let root: string;
let runtime: ProcessRuntime;
let objects: FakePodObjects;
let h: ReturnType<typeof realHarness>;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mk-objects-"));
  runtime = new ProcessRuntime({ rootDir: root, owner: cgroups.ownerFor(root) });
  objects = new FakePodObjects();
  objects.setSecret("demo", "db", { password: "s3cret" });
  h = realHarness(runtime, { objects });
});

afterEach(async () => {
  await h.close();
  rmSync(root, { recursive: true, force: true });
});

testNeeding("a Secret volume is a tmpfs holding the Secret's files; the env has its key; unmounted with the pod", rootMissing(), async () => {
  const pod = validatePod(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "reader", namespace: "demo" },
      spec: {
        restartPolicy: "Never",
        volumes: [{ name: "db", secret: { secretName: "db", defaultMode: 0o400 } }],
        containers: [
          {
            name: "app",
            image: "busybox",
            command: ["sh", "-c", 'echo "env=$PW file=$(cat "$MINIKUBELET_VOLUME_DB/password") fs=$(stat -f -c %T "$MINIKUBELET_VOLUME_DB") mode=$(stat -L -c %a "$MINIKUBELET_VOLUME_DB/password")"'],
            env: [{ name: "PW", valueFrom: { secretKeyRef: { name: "db", key: "password" } } }],
            volumeMounts: [{ name: "db", mountPath: "/does/not/exist/on/the/host" }],
          },
        ],
      },
    },
    { file: "reader", source: "api", node: "", apiObjects: "allowed" },
  );
  await h.kubelet.sync(desired(pod));
  const exited = await h.event((e) => e.reason === "Exited" && e.container === "app");
  expect(exited.message).toBe("Container app exited with code 0 (Completed)");
  const id = h.kubelet.pods.get(pod.key)!.app[0]!.containerId!;
  expect(await runtime.readLogs(id)).toBe("env=s3cret file=s3cret fs=tmpfs mode=400\n");
  const dir = runtime.podVolumeDir(pod, "db");
  expect(isMountPoint(dir)).toBe(true);
  await h.kubelet.sync(desired(), { sourcesReady: true });
  await h.kubelet.idle();
  expect(isMountPoint(dir)).toBe(false);
});
