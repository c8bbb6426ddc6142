/**
 * Decoding one manifest file: YAML through the `yaml` package (exactly one document), JSON through
 * JSON.parse. Both are bounded, because the directory may hold anything: files over 1 MiB are
 * refused before they are read, and YAML alias expansion is capped so a "billion laughs" file
 * fails in milliseconds instead of eating the agent's memory.
 */
import { readFileSync, statSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { ManifestError } from "./errors.ts";

/** The largest manifest accepted, in bytes (the API server's request limit is larger; a Pod is small). */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** How many alias nodes may be expanded while decoding one YAML document. */
export const MAX_ALIAS_COUNT = 100;

export type ManifestFormat = "yaml" | "json";

/** The format a file name says it holds, or undefined for files that are not manifests. */
export function manifestFormat(fileName: string): ManifestFormat | undefined {
  if (fileName.endsWith(".yaml") || fileName.endsWith(".yml")) return "yaml";
  if (fileName.endsWith(".json")) return "json";
  return undefined;
}

function fail(file: string, message: string, cause?: unknown): never {
  throw new ManifestError(file, [{ path: [], message }], { cause });
}

function tooLarge(file: string, bytes: number): never {
  fail(file, `file is ${bytes} bytes, over the ${MAX_MANIFEST_BYTES}-byte (1 MiB) limit for a manifest`);
}

/**
 * Decodes manifest text. `file` is only used in messages.
 * @throws ManifestError naming the file, with the line and column of YAML syntax errors.
 */
export function parseManifest(text: string, file: string, format: ManifestFormat): unknown {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_MANIFEST_BYTES) tooLarge(file, bytes);
  return format === "json" ? parseJson(text, file) : parseYaml(text, file);
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    fail(file, `invalid JSON: ${(error as Error).message}`, error);
  }
}

function parseYaml(text: string, file: string): unknown {
  const documents = parseAllDocuments(text, { uniqueKeys: true });
  // An empty or comment-only file decodes to an EmptyStream with no documents.
  if (!Array.isArray(documents) || documents.length === 0) fail(file, "empty file: expected one Pod");
  if (documents.length > 1) {
    fail(file, `holds ${documents.length} YAML documents; put one Pod in each file`);
  }
  const document = documents[0]!;
  const syntax = document.errors[0];
  if (syntax) fail(file, `invalid YAML: ${firstLine(syntax.message)}`, syntax);
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      fail(file, `YAML aliases expand too far (more than ${MAX_ALIAS_COUNT} alias expansions): refusing a possible alias bomb`, error);
    }
    fail(file, `invalid YAML: ${firstLine((error as Error).message)}`, error);
  }
}

function firstLine(message: string): string {
  return message.split("\n", 1)[0]!.trim().replace(/:$/, "");
}

/**
 * Reads and decodes one manifest file, refusing it by size before reading it.
 * @param displayName the file as it appears in messages (default: the path).
 * @throws ManifestError for a file that cannot be read, is too large, or does not decode.
 */
export function readManifestFile(path: string, displayName = path): unknown {
  const format = manifestFormat(path) ?? fail(displayName, "not a manifest: the name must end in .yaml, .yml or .json");
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_MANIFEST_BYTES) tooLarge(displayName, size);
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    fail(displayName, `cannot read: ${(error as Error).message}`, error);
  }
  return parseManifest(text, displayName, format);
}
