/**
 * ConfigMap, Secret and ServiceAccount validation (api/resources/objects), as the API server's
 * ValidateConfigMap, ValidateSecret and their updates word it; a Secret's values never appear.
 */
import { expect, test } from "bun:test";
import { OBJECT_KINDS } from "../../src/api/resources/objects/object-kinds.ts";
import { configKeyProblems, configMapCauses, MAX_DATA_BYTES, secretCauses } from "../../src/api/resources/objects/object-validation.ts";
import { ApiError } from "../../src/api/http/status.ts";

const meta = { name: "app", namespace: "default" };
const b64 = (text: string) => Buffer.from(text).toString("base64");
const kind = (name: string) => OBJECT_KINDS.find((k) => k.kind === name)!;

test("config keys: the regex, '.', '..', a '..' prefix and 253 characters, one message per rule", () => {
  expect(configKeyProblems("app.properties")).toEqual([]);
  expect(configKeyProblems("a/b")[0]).toStartWith("a valid config key must consist of alphanumeric characters, '-', '_' or '.'");
  expect(configKeyProblems(".")).toEqual(["must not be '.'"]);
  expect(configKeyProblems("..")).toEqual(["must not be '..'"]);
  expect(configKeyProblems("..x")).toEqual(["must not start with '..'"]);
  expect(configKeyProblems("k".repeat(254))).toEqual(["must be no more than 253 characters"]);
});

test("a ConfigMap: bad keys by field path, a key in both data and binaryData, and more than 1 MiB", () => {
  expect(configMapCauses({ metadata: meta, data: { "a b": "1", dup: "x" }, binaryData: { dup: b64("y") } }).map((c) => `${c.field}: ${c.message.slice(0, 48)}`)).toEqual([
    'data[a b]: Invalid value: "a b": a valid config key must co',
    'data[dup]: Invalid value: "dup": duplicate of key present i',
  ]);
  expect(configMapCauses({ metadata: meta, data: { big: "x".repeat(MAX_DATA_BYTES) } })).toEqual([]);
  expect(configMapCauses({ metadata: meta, data: { big: "x".repeat(MAX_DATA_BYTES), more: "y" } })).toEqual([
    { reason: "FieldValueTooLong", message: "Too long: may not be more than 1048576 bytes", field: "" },
  ]);
  expect(configMapCauses({ metadata: { name: "Bad_Name" } })[0]).toMatchObject({ field: "metadata.name", reason: "FieldValueInvalid" });
});

test("a Secret type's required keys, its JSON checked without quoting it", () => {
  const causes = (type: string, data: Record<string, string>, annotations?: Record<string, string>) =>
    secretCauses({ metadata: { ...meta, ...(annotations && { annotations }) }, type, data }).map((c) => `${c.field}: ${c.message}`);
  expect(causes("kubernetes.io/tls", { "tls.crt": b64("c") })).toEqual(["data[tls.key]: Required value"]);
  expect(causes("kubernetes.io/basic-auth", {})).toEqual(["data[username]: Required value", "data[password]: Required value"]);
  expect(causes("kubernetes.io/basic-auth", { password: "" })).toEqual([]);
  expect(causes("kubernetes.io/ssh-auth", { "ssh-privatekey": "" })).toEqual(["data[ssh-privatekey]: Required value"]);
  expect(causes("kubernetes.io/service-account-token", {})).toEqual(["metadata.annotations[kubernetes.io/service-account.name]: Required value"]);
  const docker = causes("kubernetes.io/dockerconfigjson", { ".dockerconfigjson": b64("{not json: hunter2") });
  expect(docker).toHaveLength(1);
  expect(docker[0]).toStartWith('data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": ');
  expect(docker[0]).not.toContain("hunter2");
  expect(causes("example.com/anything", { x: b64("1") })).toEqual([]);
});

test("decode: stringData written into data (over a key in both), the type defaulted, a bad base64 or a number the decoder's 400", () => {
  const secret = kind("Secret");
  expect(secret.decode({ metadata: meta, data: { a: b64("old"), b: b64("keep") }, stringData: { a: "new" } })).toEqual({ metadata: meta, data: { a: b64("new"), b: b64("keep") }, type: "Opaque" });
  const refused = (body: Record<string, unknown>, decode = secret.decode) => {
    try {
      decode(body);
    } catch (error) {
      if (error instanceof ApiError) return [error.code, error.message];
    }
    return undefined;
  };
  expect(refused({ data: { a: "not base64!" } })).toEqual([400, 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3']);
  expect(refused({ data: { a: 1 } }, kind("ConfigMap").decode)).toEqual([400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string (key "a")']);
});

test("updates: an immutable ConfigMap keeps its data and its immutability; a Secret keeps its type", () => {
  const configMap = kind("ConfigMap");
  const frozen = { metadata: meta, immutable: true, data: { a: "1" } };
  expect(configMap.validateUpdate(frozen, { ...frozen })).toEqual([]);
  expect(configMap.validateUpdate(frozen, { ...frozen, data: { a: "2" } }).map((c) => `${c.field}: ${c.message}`)).toEqual(["data: Forbidden: field is immutable when `immutable` is set"]);
  expect(configMap.validateUpdate(frozen, { metadata: meta, data: { a: "1" } }).map((c) => c.field)).toEqual(["immutable"]);
  expect(configMap.validateUpdate({ metadata: meta, data: { a: "1" } }, { metadata: meta, data: { a: "2" }, immutable: true })).toEqual([]);
  const secret = kind("Secret");
  expect(secret.validateUpdate({ type: "Opaque" }, { type: "kubernetes.io/tls" }).map((c) => `${c.field}: ${c.message}`)).toEqual(['type: Invalid value: "kubernetes.io/tls": field is immutable']);
});
