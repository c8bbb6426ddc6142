/**
 * The agent's ServiceAccount tokens (api/http/service-account-tokens.ts): a token verifies with
 * the key that signed it, across a restart (the key is kept), until it expires (a fake clock
 * steps past it), and only for its audience; another agent's key refuses it.
 */
import { expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { TokenAuthority } from "../../src/api/http/service-account-tokens.ts";
import { FakeClock } from "../fake-clock.ts";
import { tempDir } from "../store-fixtures.ts";

const subject = { namespace: "demo", serviceAccount: { name: "default", uid: "sa-uid" }, pod: { name: "web", uid: "pod-uid" } };

test("a token verifies until it expires, across a restart of the agent, and only for its audience", async () => {
  using dir = tempDir();
  const clock = new FakeClock();
  const issued = await new TokenAuthority(dir.path, clock).issue({ ...subject, audiences: [], expirationSeconds: 600 });
  expect(issued.expiresAt).toBe(Math.floor(clock.now() / 1000) * 1000 + 600_000);
  expect(statSync(join(dir.path, "service-account.key")).mode & 0o777).toBe(0o600);
  const restarted = new TokenAuthority(dir.path, clock);
  expect(await restarted.verify(issued.token)).toEqual({ ...subject, audiences: issued.audiences });
  expect(await restarted.verify(issued.token, ["https://vault.example"])).toBeUndefined();
  clock.step(601_000);
  expect(await restarted.verify(issued.token)).toBeUndefined();
});

test("another agent's key refuses the token; so does a token cut or changed", async () => {
  using mine = tempDir();
  using theirs = tempDir();
  const clock = new FakeClock();
  const { token } = await new TokenAuthority(mine.path, clock).issue({ ...subject, audiences: [], expirationSeconds: 3600 });
  expect(await new TokenAuthority(theirs.path, clock).verify(token)).toBeUndefined();
  const [header, payload, signature] = token.split(".");
  const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), sub: "system:serviceaccount:kube-system:admin" })).toString("base64url");
  expect(await new TokenAuthority(mine.path, clock).verify(`${header}.${forged}.${signature}`)).toBeUndefined();
  expect(await new TokenAuthority(mine.path, clock).verify(`${header}.${payload}`)).toBeUndefined();
});
