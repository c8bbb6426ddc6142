/**
 * Reads the text of `kubectl describe pod` for what happened to each container: its restart count,
 * its last terminated attempt, its probe lines, and the Events table's Unhealthy and Killing rows
 * (with their `(xN over ...)` repeat counts). Pure: text in, PodHistory out; unknown lines ignored.
 */
import type { ProbeKind } from "../../manifest/types.ts";
import { emptyHistory, type ContainerHistory, type PodHistory } from "./history.ts";

interface DescribedContainer {
  history: ContainerHistory;
  probes: Set<ProbeKind>;
  lastTerminated?: { started?: number; finished?: number };
}

const PROBE_LABELS: Record<string, ProbeKind> = { Liveness: "liveness", Readiness: "readiness", Startup: "startup" };

export function parseDescribeText(text: string): PodHistory {
  const containers = new Map<string, DescribedContainer>();
  const lines = text.split(/\r?\n/);
  let section = "";
  let current: DescribedContainer | undefined;
  let block = "";
  let eventsAt = -1;
  lines.forEach((line, index) => {
    if (/^\S/.test(line)) {
      section = line.replace(/:.*$/, "");
      current = undefined;
      if (section === "Events") eventsAt = index;
      return;
    }
    if (section !== "Containers" && section !== "Init Containers") return;
    const name = /^ {2}([a-z0-9][-a-z0-9.]*):\s*$/.exec(line);
    if (name) {
      current = { history: emptyHistory(), probes: new Set() };
      containers.set(name[1]!, current);
      return;
    }
    if (!current) return;
    const field = /^ {4}([A-Za-z][A-Za-z ]*):\s*(.*)$/.exec(line);
    if (field) {
      block = field[1]!;
      const [, label, value] = field;
      if (label === "Restart Count") current.history.restartCount = Number(value) || 0;
      if (label === "Last State" && value!.trim() === "Terminated") current.lastTerminated = {};
      const probe = PROBE_LABELS[label!];
      if (probe) current.probes.add(probe);
      return;
    }
    const sub = /^ {6}(Started|Finished):\s*(.*)$/.exec(line);
    if (sub && block === "Last State" && current.lastTerminated) {
      const at = Date.parse(sub[2]!.trim());
      if (!Number.isNaN(at)) current.lastTerminated[sub[1] === "Started" ? "started" : "finished"] = at;
    }
  });
  if (eventsAt >= 0) readEvents(lines.slice(eventsAt + 1), containers);
  const history: PodHistory = new Map();
  for (const [name, container] of containers) {
    const last = container.lastTerminated;
    const killed = container.history.livenessKills + container.history.startupKills > 0;
    // describe shows only the last ended attempt: its run time is the one kill time it can vouch for.
    if (killed && last?.started !== undefined && last.finished !== undefined) {
      container.history.killedAfterSeconds.push(Math.round((last.finished - last.started) / 1000));
    }
    history.set(name, container.history);
  }
  return history;
}

function readEvents(rows: readonly string[], containers: Map<string, DescribedContainer>): void {
  for (const row of rows) {
    if (/^\S/.test(row)) break;
    const columns = row.trim().split(/\s{2,}/);
    if (columns.length < 5 || columns[0] === "Type" || columns[0]!.startsWith("-")) continue;
    const [, reason, age] = columns;
    const message = columns.slice(4).join("  ");
    const count = Number(/\(x(\d+) over/.exec(age!)?.[1] ?? 1);
    if (reason === "Killing") {
      const killed = /^Container (\S+) failed (liveness|startup) probe/.exec(message);
      const container = killed && containers.get(killed[1]!);
      if (!container) continue;
      if (killed![2] === "liveness") container.history.livenessKills += count;
      else container.history.startupKills += count;
    } else if (reason === "Unhealthy") {
      const failed = /^(Liveness|Readiness|Startup) probe (failed|errored)/.exec(message);
      if (!failed) continue;
      const kind = PROBE_LABELS[failed[1]!]!;
      const container = ownerOf(kind, containers);
      if (container) container.history.unhealthy[kind] = (container.history.unhealthy[kind] ?? 0) + count;
    }
  }
}

/** The table does not name the container of an Unhealthy event: the only one with such a probe (or the only one). */
function ownerOf(kind: ProbeKind, containers: Map<string, DescribedContainer>): DescribedContainer | undefined {
  const all = [...containers.values()];
  if (all.length === 1) return all[0];
  const withProbe = all.filter((container) => container.probes.has(kind));
  return withProbe.length === 1 ? withProbe[0] : undefined;
}
