/**
 * Decoding one manifest file: YAML through the `yaml` package (exactly one document), JSON through
 * JSON.parse. Both are bounded, because the directory may hold anything: files over 1 MiB are
 * refused before they are read, YAML alias expansion is capped so a "billion laughs" file fails in
 * milliseconds instead of eating the agent's memory, and nesting is capped so a deep file is that
 * file's error instead of a stack overflow in every scan. Messages never quote the file beyond a
 * short token: a symlink may point at a secret, and these messages are published.
 */
import { ManifestError } from "./errors.ts";
import { exceedsDepth, valueExceedsDepth } from "./depth.ts";
import { readRegularFile } from "./read-file.ts";
import { parseYamlDocuments } from "./yaml-documents.ts";

/** The largest manifest accepted, in bytes (the API server's request limit is larger; a Pod is small). */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
/** How many alias nodes may be expanded while decoding one YAML document. */
export const MAX_ALIAS_COUNT = 100;
/**
 * The deepest nesting decoded. The API server's decoders stop at 10,000 ("exceeded max depth");
 * the `yaml` package overflows the stack near 6,000 and the validators recurse too, so this is
 * lower: still far beyond any Pod (its deepest fields are about 10 levels down).
 */
export const MAX_MANIFEST_DEPTH = 1000;
/** The longest run of a decoder's message quoted from the file (a token, never a line). */
const MAX_QUOTED_CHARS = 20;
/** The longest decoder message kept: one line, with its location. */
const MAX_MESSAGE_CHARS = 160;

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

function tooDeep(file: string, format: ManifestFormat, cause?: unknown): never {
  fail(file, `invalid ${format === "json" ? "JSON" : "YAML"}: exceeded max depth of ${MAX_MANIFEST_DEPTH}`, cause);
}

/** A stack overflow inside a decoder: the file nests deeper than the decoder can follow. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function parseJson(text: string, file: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (isStackOverflow(error)) tooDeep(file, "json", error);
    fail(file, `invalid JSON: ${shortened(firstLine((error as Error).message))}`, error);
  }
  if (valueExceedsDepth(value, MAX_MANIFEST_DEPTH)) tooDeep(file, "json");
  return value;
}

function parseYaml(text: string, file: string): unknown {
  // Checked on the text first: the parser is quadratic and recursive on deep block nesting.
  if (exceedsDepth(text, MAX_MANIFEST_DEPTH)) tooDeep(file, "yaml");
  try {
    const value = decodeYaml(text, file);
    if (valueExceedsDepth(value, MAX_MANIFEST_DEPTH)) tooDeep(file, "yaml");
    return value;
  } catch (error) {
    if (isStackOverflow(error)) tooDeep(file, "yaml", error);
    throw error;
  }
}

function decodeYaml(text: string, file: string): unknown {
  const documents = parseYamlDocuments(text, { uniqueKeys: true });
  if (documents.length === 0) fail(file, "empty file: expected one Pod");
  if (documents.length > 1) {
    fail(file, `holds ${documents.length} YAML documents (${documents.map(kindOf).join(", ")}); put one Pod in each file`);
  }
  const document = documents[0]!;
  const syntax = document.errors[0];
  // The library's message goes on with the source lines around the error: only its first line is kept.
  if (syntax) fail(file, `invalid YAML: ${shortened(firstLine(syntax.message))}`, syntax);
  try {
    return document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof ReferenceError && /excessive alias count/i.test(error.message)) {
      fail(file, `YAML aliases expand too far (more than ${MAX_ALIAS_COUNT} alias expansions): refusing a possible alias bomb`, error);
    }
    if (isStackOverflow(error)) throw error;
    fail(file, `invalid YAML: ${shortened(firstLine((error as Error).message))}`, error);
  }
}

/** A document's kind as a short token for the message: what it holds, or why that is not known. */
function kindOf(document: ReturnType<typeof parseYamlDocuments>[number]): string {
  if (document.errors.length > 0) return "invalid YAML";
  try {
    const value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as { kind?: unknown } | null;
    if (value === null || value === undefined) return "empty";
    return typeof value.kind === "string" && value.kind !== "" ? shortened(value.kind) : "no kind";
  } catch {
    return "unreadable";
  }
}

function firstLine(message: string): string {
  return message.split("\n", 1)[0]!.trim().replace(/:$/, "");
}

/**
 * A decoder's message with what it quotes from the file cut to a short excerpt: each quoted run,
 * and each long word (the library's own words are short; a long one is the file's).
 */
function shortened(message: string): string {
  const cut = (text: string) => (text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}...` : text);
  return message
    .replace(/"([^"]*)"/g, (_quoted, inner: string) => `"${cut(inner)}"`)
    .replace(/[^\s"]+/g, cut)
    .slice(0, MAX_MESSAGE_CHARS);
}

/**
 * Reads and decodes one manifest file, refusing it by type and size before reading it.
 * @param displayName the file as it appears in messages (default: the path).
 * @throws ManifestError for a file that is not a regular file, cannot be read, is too large, or does not decode.
 */
export function readManifestFile(path: string, displayName = path): unknown {
  const format = manifestFormat(path) ?? fail(displayName, "not a manifest: the name must end in .yaml, .yml or .json");
  const read = readRegularFile(path, MAX_MANIFEST_BYTES);
  if ("refused" in read) fail(displayName, read.refused, read.cause);
  if ("tooLarge" in read) tooLarge(displayName, read.tooLarge);
  return parseManifest(read.text, displayName, format);
}
