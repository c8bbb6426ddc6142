/**
 * Boolean query parameters as the API server converts them (k8s.io/apimachinery runtime
 * Convert_Slice_string_To_bool, used for ListOptions.watch, allowWatchBookmarks, sendInitialEvents
 * and PodLogOptions' follow, previous, timestamps): absent is false, `0` or `false` in any case is
 * false, anything else given (`True`, `yes`, a bare `?watch`) is true. No value is a 400.
 */
import { describe, expect, test } from "bun:test";
import { queryFlag } from "../../src/api/http/query-flags.ts";
import { isWatchRequest, parseWatchOptions } from "../../src/api/watch/watch.ts";
import { parsePodLogQuery } from "../../src/api/resources/pods/log-options.ts";
import { podRoutes } from "../../src/api/resources/pods/pods-api.ts";
import { call } from "../api-objects-fixtures.ts";
import { namespacesAgent } from "../namespace-fixtures.ts";
import { tempDir } from "../store-fixtures.ts";

const query = (text: string) => new URLSearchParams(text);

describe("queryFlag", () => {
  const cases: [string, boolean | undefined][] = [
    ["", undefined],
    ["watch=true", true],
    ["watch=True", true],
    ["watch=TRUE", true],
    ["watch=1", true],
    ["watch=t", true],
    ["watch=yes", true],
    ["watch", true],
    ["watch=", true],
    ["watch=false", false],
    ["watch=False", false],
    ["watch=FALSE", false],
    ["watch=fAlSe", false],
    ["watch=0", false],
    // The first value decides, as the API server takes values[0].
    ["watch=false&watch=true", false],
  ];
  for (const [text, expected] of cases) {
    test(`?${text} is ${expected}`, () => expect(queryFlag(query(text), "watch")).toBe(expected));
  }
});

describe("where the API reads a boolean", () => {
  test("the Python client's watch=True starts a watch; watch=False and watch=0 are a list", () => {
    expect(isWatchRequest(query("watch=True"))).toBe(true);
    expect(isWatchRequest(query("watch"))).toBe(true);
    expect(isWatchRequest(query("watch=False"))).toBe(false);
    expect(isWatchRequest(query("watch=0"))).toBe(false);
    expect(isWatchRequest(query("limit=500"))).toBe(false);
  });

  test("allowWatchBookmarks=True and sendInitialEvents=True are on; sendInitialEvents absent stays unset", () => {
    expect(parseWatchOptions(query("allowWatchBookmarks=True&sendInitialEvents=True"))).toMatchObject({ allowWatchBookmarks: true, sendInitialEvents: true });
    expect(parseWatchOptions(query("allowWatchBookmarks=FALSE"))).toMatchObject({ allowWatchBookmarks: false, sendInitialEvents: undefined });
  });

  test("pods/log follow, previous and timestamps: True is on, FALSE off, and an odd value is on (no 400)", () => {
    expect(parsePodLogQuery(query("follow=True&previous=TRUE&timestamps=yes"), 0)).toMatchObject({ follow: true, previous: true, timestamps: true });
    expect(parsePodLogQuery(query("follow=FALSE&previous=0&timestamps=False"), 0)).toMatchObject({ follow: false, previous: false, timestamps: false });
    expect(parsePodLogQuery(query("follow=maybe"), 0).follow).toBe(true);
  });
});

describe("unknown query parameters", () => {
  test("are ignored, as the API server's query decoding ignores what it does not know: a list and a create answer as without them", async () => {
    using dir = tempDir();
    const a = namespacesAgent(dir.path);
    const extra = { pretty: "true", timeout: "32s", bogus: "1", fieldManager: "kubectl-create" };
    expect((await call(podRoutes, "GET", "/api/v1/namespaces/default/pods", a.api, { query: extra })).status).toBe(200);
    expect((await a.send("POST", "/api/v1/namespaces", { metadata: { name: "team-a" } }, extra)).status).toBe(201);
    a.h.close();
  });
});
