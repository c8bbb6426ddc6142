import { expect, test } from "bun:test";
import { descendants, parseXml } from "../small-xml.ts";

test("the test XML reader reads elements, attributes and decoded text", () => {
  const root = parseXml(`<?xml version="1.0"?>\n<svg a="1 &amp; 2"><rect x="3"><title>a &lt;b&gt;</title></rect><g/></svg>\n`);
  expect(descendants(root).map((e) => e.name)).toEqual(["svg", "rect", "title", "g"]);
  expect(root.attributes.a).toBe("1 & 2");
  expect(root.children[0]!.children[0]!.text).toBe("a <b>");
});

test("the test XML reader refuses what is not well formed", () => {
  expect(() => parseXml("<svg><rect></svg>")).toThrow("</svg> closes <rect>");
  expect(() => parseXml("<svg><title>a < b</title></svg>")).toThrow('a bare "<"');
  expect(() => parseXml("<svg><title>a & b</title></svg>")).toThrow('a bare "&"');
  expect(() => parseXml("<svg>")).toThrow("<svg> is never closed");
});
