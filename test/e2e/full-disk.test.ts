/**
 * Issue 26, a full disk, compiled binary, process runtime: the database, the runtime root and the
 * manifests on a 16 MiB tmpfs the test mounts, filled to the last byte while pods run. While full:
 * the API's Node says DiskPressure, a pod whose manifest is removed is stopped and gone, and a
 * container's log writer lives on. Once the space is freed, without a restart: the database takes
 * the writes it refused (the removal, the cleared pressure) and the container's log grows again,
 * saying what was dropped.
 */
import { CRI_LOG_NAME, decodeCriLog } from "../../src/runtime/container-log-file.ts";
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { Agent, e2ePodManifest, freePort, isRunning, killRecordedContainers, podTable, processContainers, processE2E, waitFor, Workspace } from "./helpers.ts";
import { mountSmallFilesystem } from "../small-filesystem.ts";

const e2e = processE2E();

/** 2 KB lines, tens a second. */
const CHATTY = `      command: ["sh", "-c", ${JSON.stringify(`i=0; while :; do i=$((i+1)); echo "line $i ${"x".repeat(2000)}"; sleep 0.02; done`)}]`;

test("a full disk: DiskPressure is served, a removed pod is stopped, logs live on; freed, the agent catches up by itself", async () => {
  const ws = (e2e.ws = new Workspace());
  const disk = mountSmallFilesystem(16 << 20, ws.path);
  mkdirSync(ws.manifests);
  let agent: Agent | undefined;
  try {
    ws.write("chatty.yaml", e2ePodManifest("chatty", CHATTY));
    ws.write("victim.yaml", e2ePodManifest("victim"));
    const port = await freePort();
    agent = new Agent(ws, ["--api-listen", `127.0.0.1:${port}`, "--stop-pods-on-exit", "--container-log-max-size", "1Mi", "--container-log-max-files", "2"]);
    const running = agent;
    const detail = () => running.stdout + running.stderr;
    await waitFor("both pods running", () => {
      const table = podTable(ws, "e2e");
      return table["chatty-n1"]?.[1] === "Running" && table["victim-n1"]?.[1] === "Running";
    }, 15_000, detail);
    const token = readFileSync(`${ws.db}.api/token`, "utf8").trim();
    const diskPressure = async () => {
      const response = await fetch(`https://127.0.0.1:${port}/api/v1/nodes/n1`, { headers: { authorization: `Bearer ${token}` }, tls: { rejectUnauthorized: false } });
      const node = (await response.json()) as { status: { conditions: { type: string; status: string }[] } };
      return node.status.conditions.find((c) => c.type === "DiskPressure")?.status;
    };
    expect(await diskPressure()).toBe("False");
    const chatty = processContainers(ws).find((c) => c.podName === "chatty-n1")!;
    const victim = processContainers(ws).find((c) => c.podName === "victim-n1")!;
    const chattyLog = `${ws.db}.runtime/process/pods/${chatty.podUid}/containers/${chatty.id}/${CRI_LOG_NAME}`;

    disk.fill();
    // The monitor's next look (10 s at most): served from memory, whether or not the database took it.
    await waitFor("DiskPressure on the API's Node", async () => (await diskPressure()) === "True", 15_000, detail);

    ws.remove("victim.yaml");
    await waitFor("the removed pod's process gone", () => !isRunning(victim.pid!), 15_000, detail);
    await agent.waitForOutput("Normal PodRemoved e2e/victim-n1: Stopped pod victim-n1", 15_000);
    expect(isRunning(chatty.pid!)).toBe(true);

    disk.free();
    await waitFor("DiskPressure cleared on the API's Node", async () => (await diskPressure()) === "False", 15_000, detail);
    // The writes the full disk refused, made by the same agent once there is room.
    await waitFor("the removal and the cleared pressure in the database", () => {
      const removed = ws.query<{ deleted_at: number | null }>("SELECT deleted_at FROM pods WHERE name = 'victim-n1'");
      const pressure = ws.query<{ disk_pressure: number }>("SELECT disk_pressure FROM node_status");
      return removed.length > 0 && removed.every((row) => row.deleted_at !== null) && pressure[0]?.disk_pressure === 0;
    }, 15_000, detail);
    // The log writer lived through it: the drop is said once, and the container's lines follow.
    await waitFor("the chatty container's log growing again after the drop", () => {
      const text = decodeCriLog(readFileSync(chattyLog)).toString();
      const at = text.indexOf("[minikubelet] container output dropped");
      return at >= 0 && text.slice(at).split("\n").filter((line) => line.startsWith("line ")).length >= 3;
    }, 15_000, detail);
    expect(podTable(ws, "e2e")["chatty-n1"]).toEqual(["1/1", "Running", "0"]);
  } finally {
    disk.free();
    await agent?.terminate();
    killRecordedContainers(ws.path);
    disk.unmount();
  }
}, 90_000);
