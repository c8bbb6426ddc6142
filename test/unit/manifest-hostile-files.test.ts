/**
 * Files in the manifest directory that are not manifests at all (issue 26): each is that file's
 * own refused row, in the same scan that still loads every other file, and none of its content
 * reaches a message (messages go to events, the database and the API).
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadManifests, type LoadResult } from "../../src/manifest/source.ts";
import { MAX_MANIFEST_DEPTH } from "../../src/manifest/parse.ts";

const SECRET = "SECRETMARKER7f3a";

let dir: string;
let outside: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mk-hostile-"));
  outside = mkdtempSync(join(tmpdir(), "mk-hostile-target-"));
  writeFileSync(join(dir, "web.yaml"), pod("web"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function pod(name: string): string {
  return JSON.stringify({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "demo" }, spec: { containers: [{ name: "main", image: "busybox", command: ["sleep", "60"] }] } });
}

/** The one refused row for `file`, after checking that web.yaml still loaded in the same scan. */
function refused(result: LoadResult, file: string): { message: string; reason: string; name: string } {
  expect([...result.pods.keys()]).toEqual(["demo/web"]);
  expect(result.errors.map((error) => error.file)).toEqual([join(dir, file)]);
  const [error] = result.errors;
  return { message: error!.message, reason: error!.reason, name: error!.name };
}

/** Everything a refused file puts where others can read it. */
function published(result: LoadResult): string {
  return JSON.stringify(result.errors);
}

describe("deep nesting", () => {
  test("YAML nested 10,000 deep (20 KB) is that file's row naming the limit; the other files load", () => {
    writeFileSync(join(dir, "deep.yaml"), `a: ${"[".repeat(10_000)}${"]".repeat(10_000)}\n`);
    const row = refused(loadManifests(dir), "deep.yaml");
    expect(row).toEqual({ message: `deep.yaml: invalid YAML: exceeded max depth of ${MAX_MANIFEST_DEPTH}`, reason: "FailedToParse", name: "deep.yaml" });
  });

  test("YAML of nested block sequences on one line is refused the same way", () => {
    writeFileSync(join(dir, "dash.yaml"), `${"- ".repeat(8_000)}x\n`);
    expect(refused(loadManifests(dir), "dash.yaml").message).toBe(`dash.yaml: invalid YAML: exceeded max depth of ${MAX_MANIFEST_DEPTH}`);
  });

  test("JSON nested 50,000 deep is refused; JSON.parse alone would take it and the validator would overflow", () => {
    writeFileSync(join(dir, "deep.json"), `{"kind":"Pod","spec":${"[".repeat(50_000)}${"]".repeat(50_000)}}`);
    expect(refused(loadManifests(dir), "deep.json").message).toBe(`deep.json: invalid JSON: exceeded max depth of ${MAX_MANIFEST_DEPTH}`);
  });

  test("block nesting by indentation past the limit is refused once decoded", () => {
    const lines = Array.from({ length: MAX_MANIFEST_DEPTH + 5 }, (_, depth) => `${" ".repeat(depth)}k${depth}:`);
    writeFileSync(join(dir, "indent.yaml"), `${lines.join("\n")} x\n`);
    expect(refused(loadManifests(dir), "indent.yaml").message).toBe(`indent.yaml: invalid YAML: exceeded max depth of ${MAX_MANIFEST_DEPTH}`);
  });

  test("nesting up to the limit decodes and is judged as a Pod", () => {
    const depth = MAX_MANIFEST_DEPTH - 2;
    writeFileSync(join(dir, "edge.json"), `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"edge"},"spec":${"[".repeat(depth)}${"]".repeat(depth)}}`);
    expect(refused(loadManifests(dir), "edge.json").message).toBe("edge.json: spec: must be an object (found a list)");
  });
});

describe("entries that are not regular files", () => {
  test("a FIFO is refused without being opened (opening it would block the scan)", () => {
    const made = spawnSync("mkfifo", [join(dir, "pipe.yaml")]);
    expect(made.status).toBe(0);
    // A reader of this FIFO would wait for a writer forever: the scan returning at all proves it was not opened.
    expect(refused(loadManifests(dir), "pipe.yaml")).toEqual({ message: "pipe.yaml: is not a directory or regular file (a FIFO): not read", reason: "FailedToParse", name: "pipe.yaml" });
  });

  test("a symlink to a device is refused without being opened", () => {
    symlinkSync("/dev/zero", join(dir, "zero.yaml"));
    expect(refused(loadManifests(dir), "zero.yaml").message).toBe("zero.yaml: is not a directory or regular file (a character device): not read");
  });

  test("a symlink loop is refused with the system's reason; a dangling symlink is still no entry at all", () => {
    symlinkSync(join(dir, "b.yaml"), join(dir, "a.yaml"));
    symlinkSync(join(dir, "a.yaml"), join(dir, "b.yaml"));
    symlinkSync(join(dir, "missing.yaml"), join(dir, "dangling.yaml"));
    const result = loadManifests(dir);
    expect([...result.pods.keys()]).toEqual(["demo/web"]);
    expect(result.errors.map((error) => error.message)).toEqual([
      "a.yaml: cannot read: ELOOP: too many symbolic links encountered",
      "b.yaml: cannot read: ELOOP: too many symbolic links encountered",
    ]);
  });

  test("a directory named like a manifest is refused, as the kubelet does, without recursing into it", () => {
    mkdirSync(join(dir, "folder.yaml"));
    writeFileSync(join(dir, "folder.yaml", "inner.yaml"), pod("inner"));
    expect(refused(loadManifests(dir), "folder.yaml").message).toBe("folder.yaml: is a directory: not recursing into manifest path");
  });
});

describe("a symlink to a file that is not a manifest (as to /etc/shadow)", () => {
  const link = (target: string, name: string) => symlinkSync(join(outside, target), join(dir, name));

  test("shadow-style lines: refused, the content quoted nowhere", () => {
    writeFileSync(join(outside, "shadow"), `root:$6$${SECRET}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n`);
    link("shadow", "shadow.yaml");
    const result = loadManifests(dir);
    expect(refused(result, "shadow.yaml").message).toBe('shadow.yaml: kind: required (must be "Pod"); the file is not read as a Pod');
    expect(published(result)).not.toContain(SECRET);
  });

  test("a plain string, a list and a number: refused by type only", () => {
    for (const [index, text] of [`${SECRET} and more`, `- ${SECRET}\n`, "42\n"].entries()) {
      writeFileSync(join(outside, `f${index}`), text);
      link(`f${index}`, `f${index}.yaml`);
    }
    const result = loadManifests(dir);
    expect(result.errors.map((error) => error.message)).toEqual([
      "f0.yaml: must be a Pod object (found a string); the file is not read as a Pod",
      "f1.yaml: must be a Pod object (found a list); the file is not read as a Pod",
      "f2.yaml: must be a Pod object (found a number); the file is not read as a Pod",
    ]);
    expect(published(result)).not.toContain(SECRET);
  });

  test("an object that is not a Pod: neither its field names, its values nor its metadata.name are quoted", () => {
    writeFileSync(join(outside, "conf.json"), JSON.stringify({ password: SECRET, [SECRET]: 1, metadata: { name: `x${SECRET.toLowerCase()}` } }));
    link("conf.json", "conf.json");
    const result = loadManifests(dir);
    expect(refused(result, "conf.json")).toEqual({ message: 'conf.json: kind: required (must be "Pod"); the file is not read as a Pod', reason: "Invalid", name: "conf.json" });
    expect(published(result).toLowerCase()).not.toContain(SECRET.toLowerCase());
  });

  test("another kind is named, but only by a short excerpt of the value", () => {
    writeFileSync(join(outside, "long.yaml"), `kind: ${SECRET}${"x".repeat(200)}\n`);
    link("long.yaml", "long.yaml");
    const { message } = refused(loadManifests(dir), "long.yaml");
    expect(message).toStartWith('long.yaml: kind: must be "Pod" (found "SECRETMARKER');
    expect(message.length).toBeLessThan(140);
  });

  test("a YAML syntax error quotes no source line, only the location", () => {
    writeFileSync(join(outside, "bad"), `password: ${SECRET}\n  nested: [\n${SECRET}-line-two\n`);
    link("bad", "bad.yaml");
    const result = loadManifests(dir);
    expect(refused(result, "bad.yaml").message).toMatch(/^bad\.yaml: invalid YAML: .* at line \d+, column \d+$/);
    expect(published(result)).not.toContain(SECRET);
  });

  test("a decoder's message keeps only a short token of what it quotes", () => {
    const long = `${SECRET}${"z".repeat(100)}`;
    const cases: Array<[string, string]> = [
      ["header.yaml", `a: |${long}\n  x\n`],
      ["alias.yaml", `kind: Pod\na: *${long}\n`],
    ];
    for (const [name, text] of cases) writeFileSync(join(dir, name), text);
    const messages = loadManifests(dir).errors.map((error) => error.message);
    expect(messages).toEqual([
      "alias.yaml: invalid YAML: Unresolved alias (the anchor must be set before the alias): SECRETMARKER7f3azzzz...",
      "header.yaml: invalid YAML: Block scalar header includes extra characters: |SECRETMARKER7f3azzz... at line 1, column 5",
    ]);
  });

  test("a JSON syntax error quotes at most a short token", () => {
    writeFileSync(join(outside, "bad.json"), `${SECRET}${"y".repeat(500)} trailing`);
    link("bad.json", "bad.json");
    const { message } = refused(loadManifests(dir), "bad.json");
    expect(message).toStartWith("bad.json: invalid JSON: ");
    expect(message.length).toBeLessThan(120);
  });

  test("a symlink to a Pod manifest outside the directory still runs (the kubelet follows symlinks)", () => {
    writeFileSync(join(outside, "api.yaml"), pod("api"));
    link("api.yaml", "api.yaml");
    const result = loadManifests(dir);
    expect([...result.pods.keys()]).toEqual(["demo/api", "demo/web"]);
    expect(result.errors).toEqual([]);
  });
});
