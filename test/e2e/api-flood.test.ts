/**
 * A flood of bare TCP connections (no TLS handshake, no token) against a real agent with a small
 * open-files limit (prlimit, so the flood is quick): past its share of descriptors the API closes
 * a new connection at accept, so the loop still reads a manifest dropped in and starts its pod, a
 * client already connected is still answered, and once the handshake deadline has cut the flood's
 * connections a new client is served again. On the base the agent ran out of descriptors
 * (EMFILE) and the manifest never started.
 */
import { expect, test } from "bun:test";
import { connect as tcpConnect, type Socket } from "node:net";
import { connect as tlsConnect, type TLSSocket } from "node:tls";
import { apiDirOf, loadCredentials } from "../../src/api/http/tls.ts";
import { Agent, processE2E, waitFor, Workspace } from "./helpers.ts";

const e2e = processE2E();
const OPEN_FILES = 1024;
const FLOOD = 1500;

const pod = (name: string) => `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n    - {name: main, image: busybox, command: [sleep, '60']}\n`;

/** One request on an open keep-alive connection; resolves with the status code once the whole answer is in. */
function ask(socket: TLSSocket, path: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? NaN);
      if (end === -1 || text.length < end + 4 + length) return;
      socket.off("data", onData);
      resolve(Number(text.split(" ")[1]));
    };
    socket.on("data", onData);
    socket.once("error", reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  });
}

test("a flood of bare connections takes no descriptor the loop needs: a new manifest starts, the API answers", async () => {
  const ws = (e2e.ws = new Workspace());
  ws.write("early.yaml", pod("early"));
  const agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--tls-handshake-timeout", "2s"], { wrap: ["prlimit", `--nofile=${OPEN_FILES}:${OPEN_FILES}`] });
  e2e.agents.push(agent);
  await agent.waitForOutput("Started default/early-n1 main", 15_000);
  const url = new URL(await waitFor("the API's address", () => /minikubelet: api +(https:\S+)/.exec(agent.stderr)?.[1], 10_000, () => agent.stderr));
  const credentials = loadCredentials(apiDirOf(ws.db));
  const kept = await new Promise<TLSSocket>((resolve, reject) => {
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port), ca: credentials.caPem, servername: "localhost" }, () => resolve(socket));
    socket.on("error", reject);
  });
  expect(await ask(kept, "/api/v1/pods", credentials.token)).toBe(200);

  const flood: Socket[] = [];
  await Promise.all(
    Array.from({ length: FLOOD }, () => new Promise<void>((resolve) => {
      const socket = tcpConnect(Number(url.port), url.hostname, () => resolve());
      socket.on("error", () => resolve());
      socket.on("close", () => resolve());
      flood.push(socket);
    })),
  );
  try {
    ws.write("late.yaml", pod("late"));
    await agent.waitForOutput("Started default/late-n1 main", 15_000);
    expect(agent.stderr).not.toContain("EMFILE");
    expect(await ask(kept, "/api/v1/namespaces/default/pods/late-n1", credentials.token)).toBe(200);
    // The flood's connections are still open on our side; the server cut them at its handshake deadline.
    const fresh = await waitFor("a new client served", async () => {
      const response = await fetch(`${url.origin}/api/v1/pods`, { headers: { Authorization: `Bearer ${credentials.token}` }, tls: { ca: credentials.caPem } } as RequestInit).catch(() => undefined);
      return response?.status === 200 && response;
    }, 10_000);
    expect(fresh.status).toBe(200);
  } finally {
    for (const socket of flood) socket.destroy();
    kept.destroy();
  }
}, 60_000);
