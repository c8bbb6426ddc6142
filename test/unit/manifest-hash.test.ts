import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson, configHash, podUid } from "../../src/manifest/hash.ts";
import { loadManifests } from "../../src/manifest/source.ts";

const manifest = { apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec: { containers: [{ name: "web", image: "busybox" }] } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("canonicalJson", () => {
  test("sorts keys at every level and keeps list order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
  });
});

describe("configHash", () => {
  test("is 32 hex characters of sha256 over {node, pod}", () => {
    const expected = new Bun.CryptoHasher("sha256").update('{"node":"lab","pod":{"a":1}}').digest("hex").slice(0, 32);
    expect(configHash({ a: 1 }, "lab")).toBe(expected);
  });

  test("does not depend on key order", () => {
    const reordered = { spec: manifest.spec, metadata: manifest.metadata, kind: "Pod", apiVersion: "v1" };
    expect(configHash(reordered, "")).toBe(configHash(manifest, ""));
  });

  test("changes with the node and with the content", () => {
    const base = configHash(manifest, "");
    expect(configHash(manifest, "lab")).not.toBe(base);
    expect(configHash({ ...manifest, spec: { containers: [{ name: "web", image: "busybox:1" }] } }, "")).not.toBe(base);
  });
});

describe("podUid", () => {
  test("is UUID-shaped (version 8, RFC variant)", () => {
    expect(podUid("lab", "/etc/m/web.yaml", manifest)).toMatch(UUID);
  });

  test("depends on node, path and content, and on nothing else", () => {
    const base = podUid("lab", "/etc/m/web.yaml", manifest);
    expect(podUid("lab", "/etc/m/web.yaml", structuredClone(manifest))).toBe(base);
    expect(podUid("lab2", "/etc/m/web.yaml", manifest)).not.toBe(base);
    expect(podUid("lab", "/etc/m/web2.yaml", manifest)).not.toBe(base);
    expect(podUid("lab", "/etc/m/web.yaml", { ...manifest, kind: "Pod2" })).not.toBe(base);
  });
});

describe("identity through the directory source", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mk-hash-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const load = () => loadManifests(dir, "lab").pods.get("default/web-lab")!;

  test("the same file keeps its UID and hash across loads (agent restarts)", () => {
    writeFileSync(join(dir, "web.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: busybox}]\n");
    const first = load();
    const second = load();
    expect(second.uid).toBe(first.uid);
    expect(second.configHash).toBe(first.configHash);
  });

  test("reformatting the file keeps the hash; the same content as JSON does too", () => {
    writeFileSync(join(dir, "web.yaml"), "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: busybox}]\n");
    const yaml = load();
    writeFileSync(join(dir, "web.yaml"), "# a comment\nkind: Pod\napiVersion: v1\nspec:\n  containers:\n    - image: busybox\n      name: web\nmetadata:\n  name: web\n");
    expect(load()).toMatchObject({ uid: yaml.uid, configHash: yaml.configHash });
  });

  test("an edit gives a new UID and hash", () => {
    writeFileSync(join(dir, "web.yaml"), JSON.stringify(manifest));
    const before = load();
    writeFileSync(join(dir, "web.yaml"), JSON.stringify({ ...manifest, spec: { containers: [{ name: "web", image: "busybox:1.36" }] } }));
    const after = load();
    expect(after.uid).not.toBe(before.uid);
    expect(after.configHash).not.toBe(before.configHash);
  });

  test("moving the file gives a new UID but the same config hash", () => {
    writeFileSync(join(dir, "web.json"), JSON.stringify(manifest));
    const before = load();
    renameSync(join(dir, "web.json"), join(dir, "web2.json"));
    const after = load();
    expect(after.uid).not.toBe(before.uid);
    expect(after.configHash).toBe(before.configHash);
  });
});
