/**
 * Manifest errors, zod-style: a file's problems are collected as issues, each with a field path,
 * so one run of `validate` shows everything that is wrong instead of the first thing.
 */

/** A path into the decoded manifest: `["spec", "containers", 0, "image"]`. */
export type FieldPath = readonly (string | number)[];

export interface Issue {
  /** Empty for problems with the file itself (size, syntax). */
  path: FieldPath;
  message: string;
  /** A field the v1 API does not have: rendered in the API server's words, path inside the message. */
  unknownField?: true;
  /** A value the API server cannot even decode (a malformed quantity): its 400, not a field error. */
  undecodable?: true;
}

/** The API server's strict field validation finding: `unknown field "spec.containers[0].comand"`. */
export function unknownFieldIssue(path: FieldPath): Issue {
  return { path, message: "unknown field", unknownField: true };
}

/** A map key in a path (Go's field.Path.Key): rendered `limits[cpu]`, not `limits.cpu`. */
export function mapKey(key: string): string {
  return `[${key}]`;
}

/** Renders a path the way the API server does: `spec.containers[0].livenessProbe`, `resources.limits[cpu]`. */
export function formatPath(path: FieldPath): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (part.startsWith("[")) out += part;
    else out += out === "" ? part : `.${part}`;
  }
  return out;
}

/** One line per issue, without the file name: `spec.containers[0].image: required`. */
export function formatIssue(issue: Issue): string {
  if (issue.unknownField) return `unknown field ${JSON.stringify(formatPath(issue.path))}`;
  return issue.path.length === 0 ? issue.message : `${formatPath(issue.path)}: ${issue.message}`;
}

/**
 * Everything wrong with one manifest file. The message is a single line (issues joined by "; ")
 * that starts with the file name, so a loop can log it and a CLI can print it as is.
 */
export class ManifestError extends Error {
  override readonly name = "ManifestError";
  /** The file as it should appear in messages (usually its base name). */
  readonly file: string;
  readonly issues: readonly Issue[];

  constructor(file: string, issues: readonly Issue[], options?: { cause?: unknown }) {
    super(`${file}: ${issues.map(formatIssue).join("; ")}`, options);
    this.file = file;
    this.issues = issues;
  }
}

/** The manifest directory itself cannot be read: nothing at all could be loaded. */
export class ManifestSourceError extends Error {
  override readonly name = "ManifestSourceError";
  readonly dir: string;

  constructor(dir: string, message: string, options?: { cause?: unknown }) {
    super(`manifest directory ${dir}: ${message}`, options);
    this.dir = dir;
  }
}

/** Accumulates issues while a manifest is walked; validators add to it and never throw. */
export class IssueList {
  readonly items: Issue[] = [];

  add(path: FieldPath, message: string): void {
    this.items.push({ path: [...path], message });
  }

  addUndecodable(path: FieldPath, message: string): void {
    this.items.push({ path: [...path], message, undecodable: true });
  }

  get empty(): boolean {
    return this.items.length === 0;
  }
}
