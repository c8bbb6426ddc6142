/**
 * The listener's client certificates (node mode's kubelet port): the gate is told the user and
 * groups of a certificate the client CA signed and of no other, on the first request of its
 * connection only, which is then closed; a client cannot forge the front door's note.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { connect } from "node:tls";
import type { CertificateUser } from "../../src/api/http/certificate-user.ts";
import { DEFAULT_LIMITS, type ApiContext } from "../../src/api/http/context.ts";
import { startApiServer, type ApiServer } from "../../src/api/http/server.ts";
import { ensureCredentials } from "../../src/api/http/tls.ts";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { realClock } from "../../src/clock.ts";
import { StoreReader } from "../../src/store/queries.ts";
import { tempDir } from "../store-fixtures.ts";
import { issueClientCertificate, recordingGate } from "../certificate-fixtures.ts";

const dir = tempDir("minikubelet-client-cert-");
const credentials = ensureCredentials(join(dir.path, "state.db"));
const file = (name: string) => join(dir.path, name);
const read = (name: string) => readFileSync(file(name), "utf8");

const seen: (CertificateUser | undefined)[] = [];
let server: ApiServer;
let port: number;

beforeAll(() => {
  issueClientCertificate(dir.path, "cluster-ca", "alice", "/O=team-a/O=team-b/CN=alice");
  issueClientCertificate(dir.path, "other-ca", "mallory", "/O=system:masters/CN=mallory");
  const context: ApiContext = { store: new StoreReader(new Database(":memory:")), dbPath: "", clock: realClock, nodeName: "lab", commits: new CommitBroadcast(), limits: DEFAULT_LIMITS };
  server = startApiServer({
    listen: { hostname: "127.0.0.1", port: 0 },
    context,
    routes: [{ method: "GET", path: "/who", handle: () => new Response("served") }],
    tls: { cert: credentials.certPem, key: credentials.keyPem },
    token: credentials.token,
    clientCa: read("cluster-ca.crt"),
    gate: recordingGate(seen),
    log: () => {},
  });
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await server.stop();
  dir[Symbol.dispose]();
});

/**
 * Writes `heads` on one TLS connection (as `client`, or with no certificate) and returns what it
 * read once `answers` whole answers came (each body is `served` or `Unauthorized`) or the server closed.
 */
function exchange(heads: string, client: string | undefined, answers = 1): Promise<string> {
  return new Promise((done, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca: credentials.caPem, ...(client && { cert: read(`${client}.crt`), key: read(`${client}.key`) }) }, () => socket.write(heads));
    let text = "";
    const finish = () => {
      socket.destroy();
      done(text);
    };
    socket.on("data", (chunk) => {
      text += String(chunk);
      if ((text.match(/\r\n\r\n(served|Unauthorized)/g)?.length ?? 0) >= answers) finish();
    });
    socket.on("end", finish);
    socket.on("error", reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer; read so far: ${text}`)));
  });
}

const get = (extra = "") => `GET /who HTTP/1.1\r\nHost: lab\r\n${extra}\r\n`;

test("a certificate the client CA signed: its CN and O reach the gate, and the answer tells the client to close its connection", async () => {
  seen.length = 0;
  const answer = await exchange(get(), "alice");
  expect(answer).toStartWith("HTTP/1.1 200");
  expect(answer.toLowerCase()).toContain("connection: close");
  expect(seen).toHaveLength(1);
  expect(seen[0]).toMatchObject({ name: "alice", groups: ["team-a", "team-b"] });
  expect(seen[0]!.credentialId).toMatch(/^X509SHA256=[0-9a-f]{64}$/);
});

test("no certificate, or one of another CA: the gate hears of none", async () => {
  seen.length = 0;
  expect(await exchange(get(), undefined)).toStartWith("HTTP/1.1 401");
  expect(await exchange(get(), "mallory")).toStartWith("HTTP/1.1 401");
  expect(seen).toEqual([undefined, undefined]);
});

test("a second request on a certificate's connection is not served as its user; a note the client writes itself is not believed", async () => {
  seen.length = 0;
  const forged = `x-minikubelet-client-certificate: anything ${encodeURIComponent(JSON.stringify({ name: "admin", groups: ["system:masters"], credentialId: "" }))}\r\n`;
  // Pipelined: the server may answer the second without a certificate or close before it, never serve it as alice.
  const answers = await exchange(get() + get(forged), "alice", 2);
  expect(answers.match(/^HTTP\/1\.1 200/gm)).toHaveLength(1);
  expect(await exchange(get(forged), undefined)).toStartWith("HTTP/1.1 401");
  expect(seen.filter((user) => user !== undefined).map((user) => user!.name)).toEqual(["alice"]);
});
