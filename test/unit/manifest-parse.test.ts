import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManifestError } from "../../src/manifest/errors.ts";
import { MAX_MANIFEST_BYTES, manifestFormat, parseManifest, readManifestFile } from "../../src/manifest/parse.ts";

const dir = mkdtempSync(join(tmpdir(), "mk-parse-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError);
    return (error as Error).message;
  }
  throw new Error("expected a ManifestError");
}

/** Nine levels of nine aliases: about 387 million strings if expanded. */
const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ..."bcdefghi".split("").map((name, index) => {
    const previous = "abcdefghi"[index]!;
    return `${name}: &${name} [${Array(9).fill(`*${previous}`).join(",")}]`;
  }),
].join("\n");

describe("parseManifest", () => {
  test("YAML decodes to a plain object", () => {
    expect(parseManifest("kind: Pod\nspec:\n  containers:\n    - name: web\n", "web.yaml", "yaml")).toEqual({
      kind: "Pod",
      spec: { containers: [{ name: "web" }] },
    });
  });

  test("YAML 1.1, as sigs.k8s.io/yaml's YAMLToJSON reads it (go-yaml v2): yes and on are booleans, 0400 octal, 1_000 a number; a date stays its text", () => {
    expect(parseManifest("a: yes\nb: on\nc: true\nd: 'yes'\n", "x.yaml", "yaml")).toEqual({ a: true, b: true, c: true, d: "yes" });
    expect(parseManifest("mode: 0400\nquoted: '0400'\ncount: 1_000\nday: 2001-12-14\nhex: 0x1F\n", "x.yaml", "yaml")).toEqual({ mode: 256, quoted: "0400", count: 1000, day: "2001-12-14", hex: 31 });
  });

  test("JSON decodes through JSON.parse", () => {
    expect(parseManifest('{"kind": "Pod"}', "crash.json", "json")).toEqual({ kind: "Pod" });
  });

  test("a JSON syntax error names the file", () => {
    expect(messageOf(() => parseManifest('{"kind": ', "crash.json", "json"))).toStartWith("crash.json: invalid JSON: ");
  });

  test("a YAML syntax error names the file, line and column on one line", () => {
    const message = messageOf(() => parseManifest("kind: Pod\nspec: [1\n", "web.yaml", "yaml"));
    expect(message).toStartWith("web.yaml: invalid YAML: ");
    expect(message).toContain("line 3, column 1");
    expect(message).not.toContain("\n");
  });

  test("a duplicate key is refused", () => {
    expect(messageOf(() => parseManifest("kind: Pod\nkind: Pod\n", "web.yaml", "yaml"))).toBe(
      "web.yaml: invalid YAML: Map keys must be unique at line 2, column 1",
    );
  });

  test("two documents in one file are refused, naming the kinds they hold", () => {
    expect(messageOf(() => parseManifest("kind: Pod\n---\nkind: Pod\n", "two.yaml", "yaml"))).toBe(
      "two.yaml: holds 2 YAML documents (Pod, Pod); put one Pod in each file",
    );
    expect(messageOf(() => parseManifest("kind: ConfigMap\n---\nkind: Secret\n---\nkind: Pod\n---\n# nothing\n", "app.yaml", "yaml"))).toBe(
      "app.yaml: holds 4 YAML documents (ConfigMap, Secret, Pod, empty); put one Pod in each file",
    );
    expect(messageOf(() => parseManifest("metadata: {}\n---\nkind: [1\n", "odd.yaml", "yaml"))).toBe(
      "odd.yaml: holds 2 YAML documents (no kind, invalid YAML); put one Pod in each file",
    );
  });

  test("\\' in a double-quoted string is a single quote, as kubectl's decoder (go-yaml) reads it", () => {
    // As in the Kubernetes docs' examples (pods/inject/envars-file-container.yaml), which kubectl reads.
    const text = 'kind: Pod\nspec:\n  containers:\n    - name: c\n      args: ["echo \\"it\\\'s here\\""]\n';
    expect(parseManifest(text, "quote.yaml", "yaml")).toEqual({ kind: "Pod", spec: { containers: [{ name: "c", args: [`echo "it's here"`] }] } });
    // What go-yaml refuses stays refused.
    expect(messageOf(() => parseManifest('a: "bad \\q escape"\n', "bad.yaml", "yaml"))).toStartWith("bad.yaml: invalid YAML: Invalid escape sequence");
  });

  test("an empty or comment-only file is refused", () => {
    expect(messageOf(() => parseManifest("", "empty.yaml", "yaml"))).toBe("empty.yaml: empty file: expected one Pod");
    expect(messageOf(() => parseManifest("# nothing\n", "empty.yaml", "yaml"))).toBe("empty.yaml: empty file: expected one Pod");
  });

  test("an alias bomb is refused quickly", () => {
    const started = performance.now();
    expect(messageOf(() => parseManifest(ALIAS_BOMB, "bomb.yaml", "yaml"))).toBe(
      "bomb.yaml: YAML aliases expand too far (more than 100 alias expansions): refusing a possible alias bomb",
    );
    // Not a timing assertion on the happy path: the bomb would take minutes and gigabytes if expanded.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("a few ordinary aliases are accepted", () => {
    expect(parseManifest("base: &b {a: 1}\ncopy: *b\n", "x.yaml", "yaml")).toEqual({ base: { a: 1 }, copy: { a: 1 } });
  });

  test("text over 1 MiB is refused", () => {
    const text = `kind: Pod\n#${"x".repeat(MAX_MANIFEST_BYTES)}\n`;
    expect(messageOf(() => parseManifest(text, "big.yaml", "yaml"))).toBe(
      `big.yaml: file is ${Buffer.byteLength(text)} bytes, over the 1048576-byte (1 MiB) limit for a manifest`,
    );
  });
});

describe("readManifestFile", () => {
  test("reads by extension", () => {
    writeFileSync(join(dir, "a.yml"), "kind: Pod\n");
    writeFileSync(join(dir, "b.json"), '{"kind":"Pod"}');
    expect(readManifestFile(join(dir, "a.yml"))).toEqual({ kind: "Pod" });
    expect(readManifestFile(join(dir, "b.json"))).toEqual({ kind: "Pod" });
  });

  test("a file over 1 MiB is refused before it is decoded", () => {
    const path = join(dir, "big.yaml");
    writeFileSync(path, Buffer.alloc(2 * MAX_MANIFEST_BYTES, "#"));
    expect(messageOf(() => readManifestFile(path, "big.yaml"))).toBe(
      "big.yaml: file is 2097152 bytes, over the 1048576-byte (1 MiB) limit for a manifest",
    );
  });

  test("a missing file is reported with its name", () => {
    expect(messageOf(() => readManifestFile(join(dir, "gone.yaml"), "gone.yaml"))).toStartWith("gone.yaml: cannot read: ");
  });

  test("manifestFormat knows only .yaml, .yml and .json", () => {
    expect([manifestFormat("a.yaml"), manifestFormat("a.yml"), manifestFormat("a.json")]).toEqual(["yaml", "yaml", "json"]);
    expect([manifestFormat("a.yaml.bak"), manifestFormat("a.txt"), manifestFormat("yaml")]).toEqual([undefined, undefined, undefined]);
  });
});
