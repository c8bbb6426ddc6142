import { expect, test } from "bun:test";
import { DesiredChanges } from "../../src/config/desired-changes.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { FakeClock } from "../fake-clock.ts";

const web = pod({ name: "web", containers: [container("app")] });
const db = pod({ name: "db", containers: [container("postgres")] });

test.each([
  ["the same set again (a periodic rescan that found nothing new)", desired(web, db), false],
  ["a pod added", desired(web, db, pod({ name: "cache", containers: [container("redis")] })), true],
  ["a pod removed", desired(web), true],
  ["a changed spec", desired({ ...web, configHash: "hash-web-2" }, db), true],
  ["a renamed file", desired({ ...web, source: "/manifests/web-renamed.yaml" }, db), true],
  ["an API pod's new label", desired({ ...web, api: { createdAt: 1 } as never }, db), true],
])("%s: worth a pass = %p", (_case, next, expected) => {
  const changes = new DesiredChanges();
  expect(changes.worthSyncing(desired(web, db))).toBe(true);
  expect(changes.worthSyncing(next)).toBe(expected);
});

test("an API pod whose labels change is worth a pass, though its hash covers the spec only", () => {
  const changes = new DesiredChanges();
  const apiPod = { ...web, api: { createdAt: 1 } as never };
  expect(changes.worthSyncing(desired(apiPod))).toBe(true);
  expect(changes.worthSyncing(desired({ ...apiPod, labels: { tier: "front" } }))).toBe(true);
  expect(changes.worthSyncing(desired({ ...apiPod, labels: { tier: "front" } }))).toBe(false);
});

test("an unchanged set is never worth a pass, however long after the last (a lost runtime event is the PLEG relist's to find)", () => {
  const clock = new FakeClock();
  const changes = new DesiredChanges();
  expect(changes.worthSyncing(desired(web))).toBe(true);
  clock.step(24 * 3600_000);
  expect(changes.worthSyncing(desired(web))).toBe(false);
  expect(changes.worthSyncing(desired(web, db))).toBe(true);
});
