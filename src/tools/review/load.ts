/**
 * Reading what `review` is given: one file or a directory of them (every `.yaml`, `.yml` and
 * `.json`, hidden files skipped, as the manifest source does), each file's YAML documents kept as
 * `yaml` Documents so `-o yaml` can edit them in place with their comments. Bounded like the
 * manifest parser (size, alias expansion); a file that does not decode or read is a ManifestError
 * naming the file and the field path.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { Document } from "yaml";
import { parseYamlDocuments } from "../../manifest/yaml-documents.ts";
import { IssueList, ManifestError } from "../../manifest/errors.ts";
import { manifestFormat, MAX_ALIAS_COUNT, MAX_MANIFEST_BYTES } from "../../manifest/parse.ts";
import type { ReviewTarget } from "./model.ts";
import { readDocument } from "./read-targets.ts";

export interface ReviewFile {
  /** As given (a path inside the directory for a directory). */
  path: string;
  /** As it appears in messages. */
  file: string;
  format: "yaml" | "json";
  /** One per YAML document (a JSON file is one). */
  documents: Document[];
  targets: ReviewTarget[];
}

/**
 * The files to review under `path` (a file, or a directory's manifest files in name order).
 * @throws ManifestError when `path` cannot be read.
 */
export function reviewPaths(path: string): string[] {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch (error) {
    fail(path, `cannot read: ${(error as Error).message}`, error);
  }
  if (!isDirectory) return [path];
  return readdirSync(path)
    .filter((name) => !name.startsWith(".") && manifestFormat(name) !== undefined)
    .sort()
    .map((name) => join(path, name))
    .filter((file) => statSync(file).isFile());
}

/** @throws ManifestError naming the file (and the document, when there are several) and each field path. */
export function loadReviewFile(path: string): ReviewFile {
  const file = basename(path);
  const format = manifestFormat(path) ?? fail(file, "not a manifest: the name must end in .yaml, .yml or .json");
  const text = readText(path, file);
  return parseReviewText(text, file, format, path);
}

/** Decodes and reads `text`; pure apart from nothing: `path` is only recorded. */
export function parseReviewText(text: string, file: string, format: "yaml" | "json", path = file): ReviewFile {
  const documents = format === "json" ? [jsonDocument(text, file)] : yamlDocuments(text, file);
  const targets: ReviewTarget[] = [];
  documents.forEach((document, index) => {
    const issues = new IssueList();
    const found = readDocument(decode(document, file), index, issues);
    const where = documents.length > 1 ? `${file} (document ${index + 1})` : file;
    if (!issues.empty) throw new ManifestError(where, issues.items);
    targets.push(...found);
  });
  return { path, file, format, documents, targets };
}

function fail(file: string, message: string, cause?: unknown): never {
  throw new ManifestError(file, [{ path: [], message }], { cause });
}

function readText(path: string, file: string): string {
  try {
    const size = statSync(path).size;
    if (size > MAX_MANIFEST_BYTES) fail(file, `file is ${size} bytes, over the ${MAX_MANIFEST_BYTES}-byte (1 MiB) limit for a manifest`);
    return readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    fail(file, `cannot read: ${(error as Error).message}`, error);
  }
}

function jsonDocument(text: string, file: string): Document {
  try {
    return new Document(JSON.parse(text));
  } catch (error) {
    fail(file, `invalid JSON: ${(error as Error).message}`, error);
  }
}

function yamlDocuments(text: string, file: string): Document[] {
  const documents = parseYamlDocuments(text, { uniqueKeys: true }).filter((document) => document.contents !== null);
  if (documents.length === 0) fail(file, "empty file: expected a Pod or a workload");
  documents.forEach((document, index) => {
    const syntax = document.errors[0];
    const where = documents.length > 1 ? ` (document ${index + 1})` : "";
    if (syntax) fail(file, `invalid YAML${where}: ${syntax.message.split("\n", 1)[0]!.trim().replace(/:$/, "")}`, syntax);
  });
  return documents;
}

function decode(document: Document, file: string): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    fail(file, `cannot decode: ${(error as Error).message.split("\n", 1)[0]}`, error);
  }
}
