/**
 * What the node's writers tell the operator about the API server, once per change of state and
 * never once per retry: the node lost the API server (with the first error), the node has it again
 * (and for how long it was gone); a refusal (403) once per verb and resource until that request
 * works, naming both, as the Node authorizer or NodeRestriction refused it; any other refusal once
 * per request and reason. The retrying itself is each writer's own.
 */
import type { Clock } from "../clock.ts";
import { ClusterApiError, resourceOf } from "./cluster-client.ts";

export interface ApiReachabilityOptions {
  /** Names the node in each line; every part of one node shares one instance, so an outage is one line. */
  nodeName?: string;
  server?: string;
  clock: Pick<Clock, "now">;
  log: (message: string) => void;
}

/** `PATCH pods/status`: how a failed request is named in the lines (its verb and resource). */
export function requestOf(error: ClusterApiError): string {
  return `${error.request.method} ${resourceOf(error.request.path)}`;
}

export class ApiReachability {
  private lostAt: number | undefined;
  private failedCount = 0;
  private closed = false;
  /** Refusals said and not yet followed by a success of the same request, by `VERB resource`. */
  private readonly refused = new Set<string>();

  constructor(private readonly options: ApiReachabilityOptions) {}

  /**
   * How many requests of any writer failed so far: a reader of the Node compares it to tell that the
   * cluster may have written meanwhile (the node-lifecycle controller marks a Node whose Lease went
   * unrenewed Unknown) without a request of its own having failed.
   */
  get failures(): number {
    return this.failedCount;
  }

  /** Whether the last word from the API server was that it does not answer. */
  get reachable(): boolean {
    return this.lostAt === undefined;
  }

  /** The node's writers are stopping: the requests they abort say nothing. */
  close(): void {
    this.closed = true;
  }

  /** A request (`PATCH nodes/status`, or one not named) was answered with success. */
  succeeded(request = ""): void {
    if (this.closed) return;
    this.answered();
    if (request !== "") for (const key of this.refused) if (key.startsWith(`${request} `)) this.refused.delete(key);
  }

  /** A request failed: a transport failure or 5xx is the API server gone; anything else an answer. */
  failed(request: string, error: unknown): void {
    if (this.closed) return;
    const { clock, log } = this.options;
    const node = this.prefix();
    this.failedCount++;
    if (!(error instanceof ClusterApiError)) {
      this.sayOnce(`${request} ${String(error)}`, `${node}${request} failed: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (error.unavailable) {
      if (this.lostAt === undefined) {
        this.lostAt = clock.now();
        const at = this.options.server === undefined ? "" : ` at ${this.options.server}`;
        log(`${node}lost the API server${at} (${error.message}); pods keep running, and what the node writes (its status, lease, pod statuses, events, mirror pods) is queued and catches up once it answers`);
      }
      return;
    }
    this.answered();
    if (error.forbidden) {
      this.sayOnce(`${request} 403`, `${node}forbidden: the API server refuses ${request} to this node: ${error.message}`);
      return;
    }
    this.sayOnce(`${request} ${error.code} ${error.reason}`, `${node}${request} refused (${error.code} ${error.reason}): ${error.message}`);
  }

  private answered(): void {
    if (this.lostAt === undefined) return;
    const seconds = Math.round((this.options.clock.now() - this.lostAt) / 1000);
    this.lostAt = undefined;
    this.options.log(`${this.prefix()}the API server answers again (after ${seconds}s without it)`);
  }

  private prefix(): string {
    return this.options.nodeName === undefined ? "" : `node ${this.options.nodeName}: `;
  }

  private sayOnce(key: string, line: string): void {
    if (this.refused.has(key)) return;
    this.refused.add(key);
    this.options.log(line);
  }
}
