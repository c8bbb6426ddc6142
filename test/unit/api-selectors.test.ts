import { describe, expect, test } from "bun:test";
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from "../../src/api/http/selectors.ts";
import { ApiError } from "../../src/api/http/status.ts";

const labels = { app: "web", tier: "front", release: "3" };

describe("label selectors match as the API server's", () => {
  const cases: [string, boolean][] = [
    ["", true],
    ["app=web", true],
    ["app==web", true],
    ["app = web", true],
    ["app!=web", false],
    ["app!=db", true],
    ["missing!=x", true],
    ["app in (web,db)", true],
    ["app in (db)", false],
    ["app notin (db)", true],
    ["app notin (web, db)", false],
    ["missing notin (x)", true],
    ["app", true],
    ["missing", false],
    ["!missing", true],
    ["!app", false],
    ["app=web,tier=front", true],
    ["app=web,tier=back", false],
    ["app=web, !missing, tier in (front)", true],
    ["release>2", true],
    ["release<2", false],
    ["app>2", false],
    ["env in (in)", false],
    ["app=", false],
    ["app in ()", false],
  ];
  for (const [selector, expected] of cases) {
    test(`${JSON.stringify(selector)} -> ${expected}`, () => {
      expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
    });
  }

  test("an empty value matches a label set to the empty string, not a missing one", () => {
    expect(matchesLabels(parseLabelSelector("app="), { app: "" })).toBe(true);
    expect(matchesLabels(parseLabelSelector("app="), {})).toBe(false);
    expect(matchesLabels(parseLabelSelector("app"), undefined)).toBe(false);
  });
});

function badRequest(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(400);
    expect((error as ApiError).reason).toBe("BadRequest");
    return (error as ApiError).message;
  }
  throw new Error("expected a 400");
}

describe("malformed label selectors are 400s in the API server's words", () => {
  const cases: [string, string][] = [
    ["app in web", "unable to parse requirement: found 'web', expected: '('"],
    ["app in (a b)", "unable to parse requirement: found 'b', expected: ',', ')' or identifier"],
    ["app ~ web", "unable to parse requirement: found '~', expected: '=', '!=', '==', 'in', notin'"],
    ["=web", "found '=', expected: !, identifier, or 'end of string'"],
    ["app=web,", "found '', expected: identifier after ','"],
    ["app=web tier=x", "found 'tier', expected: ',' or 'end of string'"],
    ["app=(web)", "unable to parse requirement: found '(', expected: identifier"],
    ["!app=web", "unable to parse requirement: found '=', expected: ',' or 'end of string'"],
    ["release>x", "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
  ];
  for (const [selector, message] of cases) {
    test(JSON.stringify(selector), () => expect(badRequest(() => parseLabelSelector(selector))).toBe(message));
  }

  test("an invalid key or value names it", () => {
    expect(badRequest(() => parseLabelSelector("-app=web"))).toStartWith('unable to parse requirement: invalid label key "-app": name part must consist of');
    expect(badRequest(() => parseLabelSelector("app=we$b"))).toStartWith('unable to parse requirement: invalid label value: "we$b": at key: "app": a valid label must be');
    expect(badRequest(() => parseLabelSelector("Example.com/app=web"))).toStartWith('unable to parse requirement: invalid label key "Example.com/app": prefix part');
    expect(parseLabelSelector("example.com/app=web")).toEqual([{ key: "example.com/app", operator: "=", values: ["web"] }]);
  });
});

describe("field selectors", () => {
  const known = ["metadata.name", "metadata.namespace", "status.phase", "spec.nodeName"] as const;
  const fields: Record<string, string> = { "metadata.name": "web-lab", "metadata.namespace": "demo", "status.phase": "Running", "spec.nodeName": "lab" };
  const cases: [string, boolean][] = [
    ["", true],
    ["metadata.name=web-lab", true],
    ["metadata.name==web-lab", true],
    ["metadata.name!=web-lab", false],
    ["status.phase!=Succeeded,status.phase!=Failed,spec.nodeName=lab", true],
    ["spec.nodeName=lab,status.phase!=Running", false],
    ["metadata.namespace=demo,metadata.name=web-lab", true],
    ["metadata.namespace=", false],
    ["spec.nodeName=other", false],
  ];
  for (const [selector, expected] of cases) {
    test(`${JSON.stringify(selector)} -> ${expected}`, () => {
      expect(matchesFields(parseFieldSelector(selector, known), (field) => fields[field] ?? "")).toBe(expected);
    });
  }

  test("escaped commas and equals signs belong to the value", () => {
    expect(parseFieldSelector("metadata.name=a\\,b\\=c", known)).toEqual([{ field: "metadata.name", operator: "=", value: "a,b=c" }]);
  });

  test("an unknown field label or a term without an operator is a 400", () => {
    expect(badRequest(() => parseFieldSelector("spec.foo=bar", known))).toBe("field label not supported: spec.foo");
    expect(badRequest(() => parseFieldSelector("metadata.name=x,status.reason=y", known))).toBe("field label not supported: status.reason");
    expect(badRequest(() => parseFieldSelector("metadata.name", known))).toBe("invalid selector: 'metadata.name'; can't understand 'metadata.name'");
  });
});
