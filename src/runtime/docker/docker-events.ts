/**
 * The engine's event stream turned into RuntimeEvents: container `start` and `die` for containers
 * minikubelet labelled. What these (and `oom`, `destroy`) say about exits goes to the exit records
 * (docker-exits.ts) before any listener hears of it, so a listener that asks for the status of a
 * container it hears exited is answered from them. When the stream breaks (dockerd restarting),
 * listeners hear `health: false`, the watcher reconnects with a capped back-off, asking for the
 * events it missed (`since` the last one seen), and reports `health: true` once connected again.
 */
import type Dockerode from "dockerode";
import { cappedDoubling } from "../../capped-doubling.ts";
import type { Clock } from "../../clock.ts";
import { DockerExitRecords } from "./docker-exits.ts";
import { LABEL } from "../labels.ts";
import type { RuntimeEvent } from "../runtime.ts";

/** First reconnect delay; doubled per failed attempt up to RECONNECT_MAX_MS. */
export const RECONNECT_BASE_MS = 250;
export const RECONNECT_MAX_MS = 5_000;

/** The part of dockerode the watcher uses, so tests can hand it a stream they control. */
export interface EventSource {
  getEvents(options?: Dockerode.GetEventsOptions): Promise<NodeJS.ReadableStream>;
}

interface EngineEvent {
  Type?: string;
  Action?: string;
  status?: string;
  id?: string;
  Actor?: { ID?: string; Attributes?: Record<string, string> };
  time?: number;
  timeNano?: number;
}

type Listener = (event: RuntimeEvent) => void;

export class DockerEventWatcher {
  private readonly listeners = new Set<Listener>();
  private stream: NodeJS.ReadableStream | undefined;
  private cancelReconnect: (() => void) | undefined;
  private failures = 0;
  private healthy = true;
  private closed = false;
  /** Unix seconds of the last event seen, for `since` on reconnect. */
  private lastEventSeconds: number | undefined;
  private connecting = false;

  constructor(
    private readonly docker: EventSource,
    private readonly clock: Clock,
    /** The label filter (default: everything minikubelet labelled); the runtime narrows it to its database. */
    private readonly labels: string[] = [`${LABEL.managedBy}=true`],
    private readonly exits: DockerExitRecords = new DockerExitRecords(),
  ) {}

  /** Adds a listener; the first one opens the stream. Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    if (this.closed) return () => {};
    this.listeners.add(listener);
    if (!this.stream && !this.cancelReconnect && !this.connecting) void this.connect();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.disconnect();
    };
  }

  /** Ends the stream and any pending reconnect, for good: later subscribe calls are no-ops. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.disconnect();
  }

  private disconnect(): void {
    this.exits.clear();
    this.cancelReconnect?.();
    this.cancelReconnect = undefined;
    const stream = this.stream;
    this.stream = undefined;
    (stream as { destroy?: () => void } | undefined)?.destroy?.();
  }

  private async connect(): Promise<void> {
    this.connecting = true;
    const filters = { type: ["container" as const], event: ["start", "die", "oom", "destroy"], label: this.labels };
    let stream: NodeJS.ReadableStream;
    try {
      const since = this.lastEventSeconds;
      stream = await this.docker.getEvents(since === undefined ? { filters } : { filters, since });
    } catch (error) {
      this.connecting = false;
      this.broken(`docker events: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.connecting = false;
    if (this.listeners.size === 0) {
      (stream as { destroy?: () => void }).destroy?.();
      return;
    }
    this.stream = stream;
    this.failures = 0;
    if (!this.healthy) {
      this.healthy = true;
      this.emit({ type: "health", healthy: true, message: "docker events stream reconnected" });
    }
    let buffered = "";
    stream.on("data", (chunk: Buffer | string) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) this.handleLine(line);
      }
    });
    const ended = (why: string) => {
      if (this.stream !== stream) return; // closed on purpose, or already handled
      this.stream = undefined;
      this.broken(why);
    };
    stream.on("end", () => ended("docker events stream ended"));
    stream.on("close", () => ended("docker events stream closed"));
    stream.on("error", (error: Error) => ended(`docker events stream failed: ${error.message}`));
  }

  private handleLine(line: string): void {
    let event: EngineEvent;
    try {
      event = JSON.parse(line) as EngineEvent;
    } catch {
      return; // a line the engine should never send; the relist backstop covers anything missed
    }
    if (event.time !== undefined) this.lastEventSeconds = event.time;
    const action = event.Action ?? event.status;
    const containerId = event.Actor?.ID ?? event.id;
    if (!containerId) return;
    if (action === "die") {
      const exitCode = Number(event.Actor?.Attributes?.exitCode);
      // timeNano is past 2^53: a float that rounds to the millisecond, not below it.
      const at = event.timeNano !== undefined ? Math.round(event.timeNano / 1e6) : event.time !== undefined ? event.time * 1000 : undefined;
      if (Number.isInteger(exitCode) && at !== undefined) this.exits.died(containerId, exitCode, at);
      else this.exits.forget(containerId);
      this.emit({ type: "exited", containerId });
    } else if (action === "start") {
      this.exits.started(containerId);
      this.emit({ type: "started", containerId });
    } else if (action === "oom") {
      this.exits.oom(containerId);
    } else if (action === "destroy") {
      this.exits.forget(containerId);
    }
  }

  private broken(message: string): void {
    this.exits.clear();
    if (this.closed || this.listeners.size === 0) return;
    if (this.healthy) {
      this.healthy = false;
      this.emit({ type: "health", healthy: false, message });
    }
    const delay = reconnectDelay(this.failures++);
    this.cancelReconnect = this.clock.setTimeout(() => {
      this.cancelReconnect = undefined;
      void this.connect();
    }, delay);
  }

  private emit(event: RuntimeEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // One listener's failure must not starve the others or kill the stream.
      }
    }
  }
}

/** 250ms, 500ms, 1s ... capped at 5s: a restarting dockerd is usually back within seconds. */
export function reconnectDelay(failures: number): number {
  return cappedDoubling(RECONNECT_BASE_MS, RECONNECT_MAX_MS, failures);
}
