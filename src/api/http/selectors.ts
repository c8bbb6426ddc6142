/**
 * `labelSelector` and `fieldSelector` as the API server parses them: the grammar of
 * k8s.io/apimachinery/pkg/labels (selector.go) and pkg/fields, with its error wording, so a bad
 * selector is the same 400 kubectl users know (`unable to parse requirement: ...`,
 * `field label not supported: spec.foo`). Each resource declares which field labels it serves.
 */
import { ApiError } from "./status.ts";

export type LabelOperator = "=" | "==" | "!=" | "in" | "notin" | "exists" | "!" | "gt" | "lt";

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export interface FieldRequirement {
  field: string;
  operator: "=" | "==" | "!=";
  value: string;
}

/** A parsed selector: every requirement must hold (the comma is AND). */
export type LabelSelector = LabelRequirement[];
export type FieldSelector = FieldRequirement[];

type Token =
  | { kind: "identifier"; text: string }
  | { kind: "in" | "notin" | "(" | ")" | "," | "!" | "=" | "==" | "!=" | ">" | "<"; text: string }
  | { kind: "end"; text: "" };

const SYMBOLS = ["!=", "==", "=", "!", "(", ")", ",", ">", "<"] as const;
const SPECIAL = new Set(["!", "=", "(", ")", ",", ">", "<"]);

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < input.length) {
    const char = input[at]!;
    if (/\s/.test(char)) {
      at++;
      continue;
    }
    const symbol = SYMBOLS.find((s) => input.startsWith(s, at));
    if (symbol) {
      tokens.push({ kind: symbol, text: symbol });
      at += symbol.length;
      continue;
    }
    let end = at;
    while (end < input.length && !SPECIAL.has(input[end]!) && !/\s/.test(input[end]!)) end++;
    const text = input.slice(at, end);
    tokens.push(text === "in" || text === "notin" ? { kind: text, text } : { kind: "identifier", text });
    at = end;
  }
  tokens.push({ kind: "end", text: "" });
  return tokens;
}

class LabelParser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  /** In a value position `in` and `notin` are plain words (`env in (in)`). */
  private peek(asValue = false): Token {
    const token = this.tokens[this.position]!;
    return asValue && (token.kind === "in" || token.kind === "notin") ? { kind: "identifier", text: token.text } : token;
  }

  private next(asValue = false): Token {
    const token = this.peek(asValue);
    this.position++;
    return token;
  }

  parse(): LabelSelector {
    const requirements: LabelSelector = [];
    for (;;) {
      const token = this.peek(true);
      if (token.kind === "end") return requirements;
      if (token.kind !== "identifier" && token.kind !== "!") {
        throw new SyntaxError(`found '${token.text}', expected: !, identifier, or 'end of string'`);
      }
      try {
        requirements.push(this.requirement());
      } catch (error) {
        throw new SyntaxError(`unable to parse requirement: ${(error as Error).message}`);
      }
      const after = this.next(true);
      if (after.kind === "end") return requirements;
      if (after.kind !== ",") throw new SyntaxError(`found '${after.text}', expected: ',' or 'end of string'`);
      const following = this.peek(true);
      if (following.kind !== "identifier" && following.kind !== "!") throw new SyntaxError(`found '${following.text}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let token = this.next(true);
    const negated = token.kind === "!";
    if (negated) token = this.next(true);
    if (token.kind !== "identifier") throw new Error(`found '${token.text}', expected: identifier`);
    const key = token.text;
    checkLabelKey(key);
    const following = this.peek(true);
    if (following.kind === "end" || following.kind === ",") return { key, operator: negated ? "!" : "exists", values: [] };
    if (negated) throw new Error(`found '${following.text}', expected: ',' or 'end of string'`);
    const operatorToken = this.next();
    switch (operatorToken.kind) {
      case "=":
      case "==":
      case "!=":
        return { key, operator: operatorToken.kind, values: [this.exactValue(key)] };
      case ">":
      case "<": {
        const value = this.exactValue(key);
        if (!/^-?\d+$/.test(value)) throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
        return { key, operator: operatorToken.kind === ">" ? "gt" : "lt", values: [value] };
      }
      case "in":
      case "notin":
        return { key, operator: operatorToken.kind, values: this.valueSet(key) };
      default:
        throw new Error(`found '${operatorToken.text}', expected: '=', '!=', '==', 'in', notin'`);
    }
  }

  private exactValue(key: string): string {
    const token = this.peek(true);
    if (token.kind === "end" || token.kind === ",") return "";
    this.next(true);
    if (token.kind !== "identifier") throw new Error(`found '${token.text}', expected: identifier`);
    checkLabelValue(key, token.text);
    return token.text;
  }

  private valueSet(key: string): string[] {
    const open = this.next(true);
    if (open.kind !== "(") throw new Error(`found '${open.text}', expected: '('`);
    const values = new Set<string>();
    let expectValue = true;
    for (;;) {
      const token = this.next(true);
      if (token.kind === ")") {
        if (expectValue) values.add("");
        return [...values].sort();
      }
      if (token.kind === ",") {
        if (expectValue) values.add("");
        expectValue = true;
        continue;
      }
      if (token.kind === "identifier" && expectValue) {
        checkLabelValue(key, token.text);
        values.add(token.text);
        expectValue = false;
        continue;
      }
      throw new Error(`found '${token.text}', expected: ',', ')' or identifier`);
    }
  }
}

// IsQualifiedName and IsValidLabelValue of k8s.io/apimachinery/pkg/util/validation.
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkLabelKey(key: string): void {
  const slash = key.indexOf("/");
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : [undefined, key];
  const problems: string[] = [];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) problems.push("prefix part must be a lowercase RFC 1123 subdomain");
  if (name.length === 0 || name.length > 63 || !NAME_PART.test(name)) {
    problems.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  }
  if (problems.length > 0) throw new Error(`invalid label key "${key}": ${problems.join("; ")}`);
}

function checkLabelValue(key: string, value: string): void {
  if (value === "" || (value.length <= 63 && NAME_PART.test(value))) return;
  throw new Error(
    `invalid label value: "${value}": at key: "${key}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
  );
}

/** Parses `labelSelector`; an absent or empty one selects everything. Throws a 400 ApiError. */
export function parseLabelSelector(text: string | null): LabelSelector {
  if (!text) return [];
  try {
    return new LabelParser(lex(text)).parse();
  } catch (error) {
    throw ApiError.badRequest((error as Error).message);
  }
}

export function matchesLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const set = labels ?? {};
  return selector.every(({ key, operator, values }) => {
    const has = Object.hasOwn(set, key);
    const value = set[key];
    switch (operator) {
      case "=":
      case "==":
      case "in":
        return has && values.includes(value!);
      case "!=":
      case "notin":
        return !has || !values.includes(value!);
      case "exists":
        return has;
      case "!":
        return !has;
      case "gt":
      case "lt": {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        return operator === "gt" ? Number(value) > Number(values[0]) : Number(value) < Number(values[0]);
      }
    }
  });
}

/**
 * Parses `fieldSelector` (`a=b,c!=d`, `\,` and `\=` escaped), then checks each field against
 * `known`, the labels the resource serves, as the API server's field label conversion does.
 */
export function parseFieldSelector(text: string | null, known: readonly string[]): FieldSelector {
  if (!text) return [];
  const selector: FieldSelector = [];
  for (const term of splitUnescaped(text, ",")) {
    if (term === "") continue;
    const requirement = fieldTerm(term, text);
    if (!known.includes(requirement.field)) throw ApiError.badRequest(`field label not supported: ${requirement.field}`);
    selector.push(requirement);
  }
  return selector;
}

function fieldTerm(term: string, whole: string): FieldRequirement {
  for (const operator of ["!=", "==", "="] as const) {
    const at = unescapedIndex(term, operator);
    if (at < 0) continue;
    return { field: term.slice(0, at), operator, value: unescape(term.slice(at + operator.length)) };
  }
  throw ApiError.badRequest(`invalid selector: '${whole}'; can't understand '${term}'`);
}

/** Whether `fields` (field label to value) meets every requirement. */
export function matchesFields(selector: FieldSelector, fields: (field: string) => string): boolean {
  return selector.every(({ field, operator, value }) => (fields(field) === value) === (operator !== "!="));
}

/** The value every object must have for `field` when the selector pins it with `=` (to narrow a query). */
export function exactField(selector: FieldSelector, field: string): string | undefined {
  return selector.find((r) => r.field === field && r.operator !== "!=")?.value;
}

function unescapedIndex(text: string, needle: string): number {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === "\\") {
      i++;
      continue;
    }
    if (text.startsWith(needle, i)) return i;
  }
  return -1;
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let rest = text;
  for (let at = unescapedIndex(rest, separator); at >= 0; at = unescapedIndex(rest, separator)) {
    parts.push(rest.slice(0, at));
    rest = rest.slice(at + separator.length);
  }
  parts.push(rest);
  return parts;
}

function unescape(text: string): string {
  return text.replace(/\\(.)/g, "$1");
}
