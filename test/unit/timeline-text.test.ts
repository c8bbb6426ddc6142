import { describe, expect, test } from "bun:test";
import { timelineText } from "../../src/tools/timeline/render-text.ts";
import { timelineSvg } from "../../src/tools/timeline/render-svg.ts";
import { descendants, parseXml } from "../small-xml.ts";
import type { TimelineAttempt, TimelineContainer } from "../../src/tools/timeline/model.ts";

const S = 1000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

function attempt(number: number, startS: number, endS: number | undefined, ending: TimelineAttempt["ending"] = "error"): TimelineAttempt {
  return { attempt: number, startedAt: T0 + startS * S, ...(endS !== undefined && { finishedAt: T0 + endS * S, exitCode: 1 }), ending: endS === undefined ? "running" : ending };
}

function text(containers: TimelineContainer[], nowS: number, width = 80): string {
  return timelineText({ pod: "demo/api-lab", containers, now: T0 + nowS * S, ended: "now", width, color: false, utcOffsetMinutes: 0 });
}

const proxy: TimelineContainer = { name: "proxy", kind: "sidecar", attempts: [attempt(0, 0, undefined)], marks: [], waitingNow: false, unloadedAttempts: 0 };

/** Two hours until an OOM kill, then 1 s crashes 10 s apart, every other one a liveness kill; 3 attempts older still. */
function api(crashes: number): TimelineContainer {
  const loop = Array.from({ length: crashes }, (_, k) => attempt(k + 1, 7210 + 11 * k, 7211 + 11 * k, k % 2 ? "probe-kill" : "error"));
  return { name: "api", kind: "app", attempts: [attempt(0, 0, 7200, "oom"), ...loop], marks: [], waitingNow: true, unloadedAttempts: 3 };
}

describe("timeline text", () => {
  test("two quiet hours before a crash loop are compressed, labelled where the scale holds again, and said so", () => {
    expect(text([proxy, api(5)], 7210 + 11 * 5 + 5)).toBe(`demo/api-lab: 12:00:00 to 14:01:10 (now) +0000, 2h1m
proxy (sidecar)  >>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
api              MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM....#....K....#....K....#.15s..
                 +~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+-------------+----------------+
                 12:00:00                       14:00:00      14:00:32  14:01:10
# Error  M OOMKilled  K killed by liveness/startup probe  > running
.. back-off wait (its length)  ~ time compressed
3 older attempts not shown (see: describe pod, or sql on attempts)
~ 12:00:00 to 14:00:00 (2h) is compressed; the rest is to one scale
`);
  });

  test("a long crash loop is cut to the newest attempts; the sidecar running since before the cut starts with <", () => {
    expect(text([proxy, api(40)], 7210 + 11 * 40 + 5)).toBe(`demo/api-lab: 14:05:40 to 14:07:35 (now) +0000, 1m55s
proxy (sidecar)  <>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>
api              #.10s.K.10s.#.10s.K.10s.#.10s.K.10s.#.10s.K.10s.#.10s.K..15s..
                 +------------------+-----------+-----------+------------------+
                 14:05:40           14:06:14    14:06:36    14:06:58    14:07:35
# Error  K killed by liveness/startup probe  > running
.. back-off wait (its length)
34 older attempts before 14:05:40 not shown (see: describe pod, or sql on
  attempts)
`);
  });

  test("the SVG of the compressed picture draws the compressed stretch of the axis, titled with its length, and a bar per attempt", () => {
    const svg = parseXml(timelineSvg({ pod: "demo/api-lab", containers: [proxy, api(5)], now: T0 + (7210 + 11 * 5 + 5) * S, ended: "now", width: 80, utcOffsetMinutes: 0 }));
    const all = descendants(svg);
    const compressed = all.filter((e) => e.attributes.class === "compressed");
    expect(compressed.map((e) => e.children[0]!.text)).toEqual(["2h compressed"]);
    expect(all.filter((e) => e.attributes.class?.startsWith("bar ")).map((e) => e.attributes.class)).toEqual([
      "bar ending-running",
      "bar ending-oom",
      "bar ending-error",
      "bar ending-probe-kill",
      "bar ending-error",
      "bar ending-probe-kill",
      "bar ending-error",
    ]);
  });
});
