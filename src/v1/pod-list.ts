/**
 * Reads pods from a file for `get pods -f FILE`: a v1 Pod, a PodList (the API's answer), or a List
 * (what `kubectl get pods -o json` and `run --status-file` write), as JSON or YAML; YAML may hold
 * several documents. Every error names the file and the field path, e.g.
 * `crash.json: items[1].kind: expected Pod, got "Service"`.
 */
import { readFileSync } from "node:fs";
import { parseYamlDocuments } from "../manifest/yaml-documents.ts";
import type { V1Pod } from "./v1.ts";

export class PodFileError extends Error {
  override readonly name = "PodFileError";
  constructor(
    readonly file: string,
    /** Field path inside the document (`items[0].metadata.name`); empty for file-level problems. */
    readonly path: string,
    readonly problem: string,
    options?: ErrorOptions,
  ) {
    super(`${file}: ${path ? `${path}: ` : ""}${problem}`, options);
  }
}

/** Reads and parses `file`; throws PodFileError when it cannot be read or holds no valid pods. */
export function readPodsFile(file: string): V1Pod[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const problem = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory, not a file" : `cannot read (${code ?? String(error)})`;
    throw new PodFileError(file, "", problem, { cause: error });
  }
  return parsePods(text, file);
}

/** Parses `text` (named `file` in errors) into pods, in document and item order. */
export function parsePods(text: string, file: string): V1Pod[] {
  const documents = parseDocuments(text, file);
  if (documents.length === 0) throw new PodFileError(file, "", "is empty; expected a Pod, PodList or List");
  const pods: V1Pod[] = [];
  documents.forEach((document, index) => {
    const prefix = documents.length > 1 ? `document ${index + 1}: ` : "";
    pods.push(...podsOf(document, file, prefix));
  });
  return pods;
}

function parseDocuments(text: string, file: string): unknown[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return [JSON.parse(text)];
    } catch (error) {
      throw new PodFileError(file, "", `invalid JSON: ${(error as Error).message}`, { cause: error });
    }
  }
  const documents = parseYamlDocuments(text);
  const parsed: unknown[] = [];
  for (const document of documents) {
    const error = document.errors[0];
    if (error) throw new PodFileError(file, "", `invalid YAML: ${error.message.split("\n")[0]}`, { cause: error });
    const value = document.toJS();
    if (value !== null && value !== undefined) parsed.push(value);
  }
  return parsed;
}

function podsOf(document: unknown, file: string, prefix: string): V1Pod[] {
  if (!isObject(document)) throw new PodFileError(file, prefix.trim(), `expected an object with a kind, got ${describe(document)}`);
  const kind = document.kind;
  if (kind === "Pod") return [checkPod(document, file, prefix)];
  if (kind === "PodList" || kind === "List") {
    if (!Array.isArray(document.items)) throw new PodFileError(file, `${prefix}items`, `expected a list of pods, got ${describe(document.items)}`);
    return document.items.map((item, index) => {
      const path = `${prefix}items[${index}]`;
      if (!isObject(item)) throw new PodFileError(file, path, `expected a Pod object, got ${describe(item)}`);
      // The API leaves kind off the items of a PodList; a List names each item's kind.
      if (item.kind !== "Pod" && !(kind === "PodList" && item.kind === undefined)) {
        throw new PodFileError(file, `${path}.kind`, `expected Pod, got ${describe(item.kind)}`);
      }
      return checkPod(item, file, `${path}.`);
    });
  }
  throw new PodFileError(file, `${prefix}kind`, `expected Pod, PodList or List, got ${describe(kind)}`);
}

/** Checks the fields the printer relies on; everything else passes through untouched. */
function checkPod(value: Record<string, unknown>, file: string, prefix: string): V1Pod {
  const fail = (path: string, problem: string): never => {
    throw new PodFileError(file, `${prefix}${path}`, problem);
  };
  if (value.apiVersion !== undefined && value.apiVersion !== "v1") fail("apiVersion", `expected v1, got ${describe(value.apiVersion)}`);
  const metadata = value.metadata;
  if (!isObject(metadata)) return fail("metadata", "required");
  if (typeof metadata.name !== "string" || metadata.name === "") fail("metadata.name", `expected a non-empty string, got ${describe(metadata.name)}`);
  if (metadata.namespace !== undefined && typeof metadata.namespace !== "string") fail("metadata.namespace", `expected a string, got ${describe(metadata.namespace)}`);
  const spec = value.spec;
  if (!isObject(spec)) return fail("spec", "required");
  checkNamedList(spec.containers, "spec.containers", true, fail);
  checkNamedList(spec.initContainers, "spec.initContainers", false, fail);
  const status = value.status;
  if (status !== undefined && status !== null) {
    if (!isObject(status)) return fail("status", `expected an object, got ${describe(status)}`);
    checkNamedList(status.initContainerStatuses, "status.initContainerStatuses", false, fail);
    checkNamedList(status.containerStatuses, "status.containerStatuses", false, fail);
    if (status.conditions !== undefined && status.conditions !== null && !Array.isArray(status.conditions)) {
      fail("status.conditions", `expected a list, got ${describe(status.conditions)}`);
    }
  }
  return value as unknown as V1Pod;
}

function checkNamedList(value: unknown, path: string, required: boolean, fail: (path: string, problem: string) => never): void {
  if (value === undefined || value === null) {
    if (required) fail(path, "required");
    return;
  }
  if (!Array.isArray(value)) return fail(path, `expected a list, got ${describe(value)}`);
  value.forEach((entry, index) => {
    if (!isObject(entry)) fail(`${path}[${index}]`, `expected an object, got ${describe(entry)}`);
    else if (typeof entry.name !== "string") fail(`${path}[${index}].name`, `expected a string, got ${describe(entry.name)}`);
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object" && value !== null) return "an object";
  return JSON.stringify(value);
}
