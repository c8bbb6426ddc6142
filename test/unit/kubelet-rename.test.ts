/**
 * A manifest renamed with its content unchanged (`mv web.yaml web-server.yaml`) is the same pod: its
 * config hash is unchanged, so it keeps running and keeps its uid (the containers carry it), while
 * the file it comes from is now the new one, in the store and in the events that name it.
 */
import { expect, test } from "bun:test";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadManifests } from "../../src/manifest/source.ts";
import { storeHarness, tempDir } from "../store-fixtures.ts";

const manifest = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "web", namespace: "demo" },
  spec: { containers: [{ name: "web", image: "busybox", command: ["sleep", "3600"] }] },
};

test("a renamed manifest keeps its pod, its uid, and names the new file from then on", async () => {
  using dir = tempDir();
  const manifests = join(dir.path, "manifests");
  mkdirSync(manifests);
  writeFileSync(join(manifests, "web.yaml"), JSON.stringify(manifest));
  const h = storeHarness(dir.path);
  const read = () => loadManifests(manifests, "lab").pods;

  await h.kubelet.sync(read());
  const uid = h.pod("demo/web-lab")!.spec.uid;
  renameSync(join(manifests, "web.yaml"), join(manifests, "web-server.yaml"));
  const renamed = read();
  expect(renamed.get("demo/web-lab")!.uid).not.toBe(uid);
  await h.kubelet.sync(renamed);
  await h.advance(1);

  const record = h.pod("demo/web-lab")!;
  expect({ uid: record.spec.uid, source: record.spec.source }).toEqual({ uid, source: join(manifests, "web-server.yaml") });
  expect(h.runtime.startsOf("web")).toBe(1);
  const rows = h.agent.db.query("SELECT uid, source FROM pods WHERE deleted_at IS NULL").all();
  expect(rows).toEqual([{ uid, source: join(manifests, "web-server.yaml") }]);

  rmSync(join(manifests, "web-server.yaml"));
  await h.kubelet.sync(read());
  await h.advance(35);
  const removed = h.events.filter((e) => e.reason === "PodRemoved");
  expect(removed.map((e) => [e.podUid, e.message])).toEqual([[uid, `Stopped pod web-lab: its manifest ${join(manifests, "web-server.yaml")} was removed`]]);
  h.agent.close();
});
