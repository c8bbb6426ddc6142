/**
 * Typed reads from a decoded manifest object. Every read checks the type and records an issue
 * with the field's path instead of throwing, so a number where a string belongs, or a map where a
 * list belongs, becomes a message and never a crash. `null` counts as absent, as in the API
 * (an empty YAML value such as `livenessProbe:` decodes to null).
 */
import type { FieldPath, IssueList } from "./errors.ts";

/** A short description of a value for messages: `number 8080`, `list`, `string "x"`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return `${typeof value} ${String(value)}`;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Wraps `value` as an object to read fields from, or records `must be an object`. */
export function objectAt(value: unknown, path: FieldPath, issues: IssueList): Fields | undefined {
  if (isPlainObject(value)) return new Fields(value, path, issues);
  issues.add(path, `must be an object (found ${describeValue(value)})`);
  return undefined;
}

interface IntOptions {
  min?: number;
  max?: number;
  default: number;
}

/** The fields of one object in the manifest, with its path for messages. */
export class Fields {
  constructor(
    readonly obj: Record<string, unknown>,
    readonly path: FieldPath,
    readonly issues: IssueList,
  ) {}

  at(key: string | number): FieldPath {
    return [...this.path, key];
  }

  /** Present and not null. */
  has(key: string): boolean {
    return this.obj[key] !== undefined && this.obj[key] !== null;
  }

  raw(key: string): unknown {
    return this.has(key) ? this.obj[key] : undefined;
  }

  /** Records an issue on `key` (or on this object when key is omitted). */
  fail(key: string | undefined, message: string): void {
    this.issues.add(key === undefined ? this.path : this.at(key), message);
  }

  string(key: string): string | undefined {
    if (!this.has(key)) return undefined;
    const value = this.obj[key];
    if (typeof value === "string") return value;
    this.fail(key, `must be a string (found ${describeValue(value)})`);
    return undefined;
  }

  /** A string that must be present and non-empty; "" after recording the issue otherwise. */
  requiredString(key: string): string {
    const value = this.string(key);
    if (value === undefined && !this.has(key)) this.fail(key, "required");
    else if (value === "") this.fail(key, "required (found an empty string)");
    return value ?? "";
  }

  int(key: string, options: IntOptions): number {
    if (!this.has(key)) return options.default;
    const value = this.obj[key];
    if (typeof value !== "number" || !Number.isInteger(value)) {
      this.fail(key, `must be an integer (found ${describeValue(value)})`);
      return options.default;
    }
    if (options.min !== undefined && value < options.min) {
      this.fail(key, `must be greater than or equal to ${options.min} (found ${value})`);
    } else if (options.max !== undefined && value > options.max) {
      this.fail(key, `must be less than or equal to ${options.max} (found ${value})`);
    }
    return value;
  }

  bool(key: string, fallback: boolean): boolean {
    if (!this.has(key)) return fallback;
    const value = this.obj[key];
    if (typeof value === "boolean") return value;
    this.fail(key, `must be true or false (found ${describeValue(value)})`);
    return fallback;
  }

  /** One of `allowed`; the default when absent. */
  oneOf<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
    const value = this.string(key);
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.fail(key, `must be one of ${allowed.join(", ")} (found ${JSON.stringify(value)})`);
    return fallback;
  }

  list(key: string): { value: unknown; path: FieldPath }[] {
    if (!this.has(key)) return [];
    const value = this.obj[key];
    if (!Array.isArray(value)) {
      this.fail(key, `must be a list (found ${describeValue(value)})`);
      return [];
    }
    return value.map((item, index) => ({ value: item, path: [...this.at(key), index] }));
  }

  stringList(key: string): string[] {
    const out: string[] = [];
    for (const item of this.list(key)) {
      if (typeof item.value === "string") out.push(item.value);
      else this.issues.add(item.path, `must be a string (found ${describeValue(item.value)})`);
    }
    return out;
  }

  /** The list's elements that are objects; the others are recorded as issues. */
  objectList(key: string): Fields[] {
    const out: Fields[] = [];
    for (const item of this.list(key)) {
      const fields = objectAt(item.value, item.path, this.issues);
      if (fields) out.push(fields);
    }
    return out;
  }

  object(key: string): Fields | undefined {
    if (!this.has(key)) return undefined;
    return objectAt(this.obj[key], this.at(key), this.issues);
  }

  /** A map of string to string, such as labels; a non-string value is recorded. */
  stringMap(key: string): Record<string, string> {
    const fields = this.object(key);
    const out: Record<string, string> = {};
    if (!fields) return out;
    for (const [name, value] of Object.entries(fields.obj)) {
      if (typeof value === "string") out[name] = value;
      else fields.fail(name, `must be a string (found ${describeValue(value)})`);
    }
    return out;
  }
}
