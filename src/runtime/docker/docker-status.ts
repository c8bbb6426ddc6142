/**
 * The engine's inspect document read as the runtime's container status: its state, pid, start and
 * finish times, exit code and OOM kill, with the engine's zero time read as "never"; and the
 * sandbox the container joined.
 */
import type Dockerode from "dockerode";
import type { ContainerStatus, RuntimeContainerState } from "../runtime.ts";
import { canonicalSignalName } from "../../manifest/signals.ts";
import { TERMINATION_MESSAGE_PATH_LABEL } from "./docker-container-config.ts";

/** The engine's zero time, which it reports for "never started" / "never finished". */
const ZERO_TIME = "0001-01-01T00:00:00Z";

/** Maps the engine's inspect document to the runtime's status. */
export function statusFromInspect(info: Dockerode.ContainerInspectInfo): ContainerStatus {
  const state = info.State;
  const status: ContainerStatus = { id: info.Id, state: stateOf(state.Status) };
  const started = parseEngineTime(state.StartedAt);
  if (started !== undefined) status.startedAt = started;
  if (status.state === "running" && state.Pid > 0) status.pid = state.Pid;
  // The create call's, else the image's STOPSIGNAL; without either the kubelet's default (SIGTERM) is the engine's too.
  const stopSignal = canonicalSignalName((info.Config as { StopSignal?: string } | undefined)?.StopSignal ?? "");
  if (status.state === "running" && stopSignal) status.stopSignal = stopSignal;
  if (status.state === "exited") {
    status.exitCode = state.ExitCode;
    const finished = parseEngineTime(state.FinishedAt);
    // The engine stamps StartedAt after runc reports the start, so a process that exits at once
    // can carry a FinishedAt a little before it; a finish never precedes the start.
    if (finished !== undefined) status.finishedAt = Math.max(finished, started ?? finished);
    if (state.OOMKilled) status.reason = "OOMKilled";
  }
  return status;
}

/** The host file bound at the container's terminationMessagePath, when the runtime bound one (docker-container-start.ts). */
export function terminationFileOf(info: Dockerode.ContainerInspectInfo): string | undefined {
  const target = info.Config.Labels?.[TERMINATION_MESSAGE_PATH_LABEL];
  if (!target) return undefined;
  return info.Mounts?.find((mount) => mount.Type === "bind" && mount.Destination === target)?.Source;
}

/** The sandbox a container joined: the pause container whose network it shares (`container:<id>`). */
export function joinedSandbox(info: Dockerode.ContainerInspectInfo): string | undefined {
  const network = info.HostConfig.NetworkMode ?? "";
  return network.startsWith("container:") ? network.slice("container:".length) : undefined;
}

function stateOf(status: string): RuntimeContainerState {
  switch (status) {
    case "created":
      return "created";
    case "running":
    case "paused":
    case "restarting":
      return "running";
    case "exited":
    case "dead":
    case "removing":
      return "exited";
    default:
      return "unknown";
  }
}

function parseEngineTime(value: string | undefined): number | undefined {
  if (!value || value.startsWith(ZERO_TIME.slice(0, 4))) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
