/**
 * The agent's writer: `SqliteStore` implements the loop's PodStateSink. Each savePod/deletePod is
 * one transaction of cached prepared statements touching only that pod's rows (the pod, its
 * containers, its current and last attempt, its back-off entries, the pass's events), so a pass
 * costs the same on day one and day ninety. A pod's events are capped as they are inserted, and
 * expired rows go after any write at most once per interval (retention.ts).
 * A savePod that would change nothing writes nothing.
 */
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock.ts";
import type { BackoffEntry } from "../kubelet/backoff.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import type { PodStateSink } from "../kubelet/pod-checkpoints.ts";
import { allContainers, restartCountOf, type ContainerRecord, type PodRecord, type Termination } from "../kubelet/pod-state.ts";
import type { RefusedFile } from "../v1/refused-pod.ts";
import type { V1Pod } from "../v1/v1.ts";
import { parseRecord, recordJson } from "./pod-record-json.ts";
import { DEFAULT_RETENTION, Retention, type Pruned, type RetentionSettings } from "./retention.ts";
import { RevisionCounter } from "./revisions.ts";
import { backoffPodUid, prepareWrites, type WriteStatements } from "./write-statements.ts";

export interface SqliteStoreOptions {
  /** An open read-write connection, migrated (see openAgentDatabase). */
  db: Database;
  clock: Clock;
  /** Where the runtime keeps an attempt's output, when it keeps a file (the process runtime). */
  logPathOf?: (podUid: string, containerId: string) => string | undefined;
  retention?: Partial<RetentionSettings>;
  /** Told what went wrong when expiry failed (it is tried again after the next write). */
  log?: (message: string) => void;
  /** Told the new revision after each transaction that raised it (the API's watches listen). */
  onCommit?: (revision: number) => void;
}

/** What a restarted agent needs to adopt its pods without resetting restart counts or back-off. */
export interface LoadedState {
  pods: PodRecord[];
  backoff: BackoffEntry[];
}

interface RefusedRow {
  file: string;
  uid: string;
  namespace: string;
  name: string;
  reason: string;
  issues_json: string;
  first_seen_at: number;
}

export class SqliteStore implements PodStateSink {
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly logPathOf: (podUid: string, containerId: string) => string | undefined;
  private readonly retention: Retention;
  private readonly log: (message: string) => void;
  private lastExpiryError: string | undefined;
  private readonly sql: WriteStatements;
  /**
   * A hash of the last v1 object written per live pod: a pass that changes nothing does not wake
   * `get -w`. A hash, not the text: a thousand pods' objects would hold megabytes of the heap.
   */
  private readonly lastObject = new Map<string, bigint | number>();
  /**
   * A hash of the last record and back-off written per live pod: a pass that changes nothing is not
   * written at all, so a thousand quiet pods cost no transaction (and no WAL growth) per resync.
   */
  private readonly lastState = new Map<string, bigint | number>();
  /** Shared with the API's pod writes (ApiPodStore): one counter for every resourceVersion. */
  readonly revisions: RevisionCounter;

  constructor(options: SqliteStoreOptions) {
    this.db = options.db;
    this.clock = options.clock;
    this.logPathOf = options.logPathOf ?? (() => undefined);
    this.sql = prepareWrites(this.db);
    this.retention = new Retention(this.sql, this.clock, { ...DEFAULT_RETENTION, ...options.retention });
    this.log = options.log ?? (() => {});
    const row = this.sql.maxRevision.get() as { revision: number | null } | null;
    this.revisions = new RevisionCounter(row?.revision ?? 0, options.onCommit);
  }

  /** Persists the pod, its containers, attempts, back-off and the pass's events in one transaction. */
  savePod(pod: PodRecord, served: V1Pod, events: KubeEvent[], backoff: BackoffEntry[]): void {
    const uid = pod.spec.uid;
    const object = JSON.stringify(served);
    const state = Bun.hash(`${JSON.stringify(pod)}\n${JSON.stringify(backoff)}`);
    const objectHash = Bun.hash(object);
    if (events.length === 0 && this.lastObject.get(uid) === objectHash && this.lastState.get(uid) === state) {
      // Nothing to write, but expiry still follows the loop's passes.
      this.expireIfDue();
      return;
    }
    this.checkpoint(pod, object, objectHash, events, () => {
      this.sql.clearBackoff.run(pod.spec.uid);
      for (const entry of backoff) this.sql.insertBackoff.run(entry.key, backoffPodUid(entry.key), entry.delayMs, entry.updatedAt);
    }, undefined);
    this.lastState.set(uid, state);
    this.expireIfDue();
  }

  /** Marks the pod deleted (kept for `describe` and `events` until retention) with its last events. */
  deletePod(pod: PodRecord, served: V1Pod, events: KubeEvent[]): void {
    const object = JSON.stringify(served);
    this.checkpoint(pod, object, undefined, events, () => this.sql.clearBackoff.run(pod.spec.uid), this.clock.now());
    this.lastObject.delete(pod.spec.uid);
    this.lastState.delete(pod.spec.uid);
    this.expireIfDue();
  }

  /**
   * Makes the refused manifests' rows exactly `refused` (a fixed or removed file loses its row) and
   * records `events`, in one transaction. A row whose problems did not change is left as it is.
   */
  saveRefusedManifests(refused: readonly RefusedFile[], events: KubeEvent[], draw: (refused: RefusedFile, firstSeenAt: number) => V1Pod): void {
    const now = this.clock.now();
    this.revisions.transact(this.db, () => {
      const stored = new Map((this.sql.refusedFiles.all() as RefusedRow[]).map((row) => [row.file, row]));
      for (const entry of refused) {
        const row = stored.get(entry.file);
        stored.delete(entry.file);
        const issues = JSON.stringify(entry.issues);
        if (row && row.uid === entry.uid && row.namespace === entry.namespace && row.name === entry.name && row.reason === entry.reason && row.issues_json === issues) continue;
        const firstSeenAt = row?.first_seen_at ?? now;
        this.sql.upsertRefused.run({
          file: entry.file,
          uid: entry.uid,
          namespace: entry.namespace,
          name: entry.name,
          reason: entry.reason,
          issues_json: issues,
          object_json: JSON.stringify(draw(entry, firstSeenAt)),
          first_seen_at: firstSeenAt,
          updated_at: now,
          revision: this.revisions.next(),
        });
      }
      for (const file of stored.keys()) this.sql.deleteRefused.run(file);
      for (const event of events) this.writeEvent(event);
    });
    this.expireIfDue();
  }

  /** Records events that belong to no pass of a pod (a pod's field warnings), in one transaction. */
  saveEvents(events: KubeEvent[]): void {
    this.revisions.transact(this.db, () => {
      for (const event of events) this.writeEvent(event);
    });
    this.expireIfDue();
  }

  /** Live pods as last checkpointed, and every back-off entry: for adoption after a restart. */
  loadState(): LoadedState {
    const pods = (this.sql.livePods.all() as { record_json: string; object_json: string }[]).map((row) => parseRecord(row.record_json, row.object_json));
    const backoff = (this.sql.allBackoff.all() as { key: string; delay_ms: number; updated_at: number }[]).map((row) => ({
      key: row.key,
      delayMs: row.delay_ms,
      updatedAt: row.updated_at,
    }));
    return { pods, backoff };
  }

  /**
   * Deletes a batch of events past the TTL and of deleted pods past the TTL or beyond their cap (their
   * attempts go with them), recording the highest revision deleted (a watch from before it gets 410).
   * Runs after writes once per interval, sooner while a batch came back full; public for tests and tools.
   */
  prune(): Pruned {
    return this.db.transaction(() => this.retention.expire())();
  }

  /**
   * After a write or a pass, and on the agent's timer: expiry, when due. Its failure is not the write's (that one committed): it is
   * reported, and tried again after the next write.
   */
  expireIfDue(): void {
    if (!this.retention.due) return;
    try {
      this.prune();
      this.lastExpiryError = undefined;
    } catch (error) {
      const message = `pruning expired events and deleted pods failed: ${(error as Error).message}`;
      // Tried after every write while it fails: said once, and again only when the error changes.
      if (message !== this.lastExpiryError) this.log(message);
      this.lastExpiryError = message;
    }
  }

  /** `objectHash`: the live pod's object's, which is remembered; undefined for a deletion, which always changes the pod. */
  private checkpoint(pod: PodRecord, object: string, objectHash: bigint | number | undefined, events: KubeEvent[], extra: () => void, deletedAt: number | undefined): void {
    const uid = pod.spec.uid;
    try {
      this.revisions.transact(this.db, () => {
        this.writePod(pod, object, objectHash, deletedAt);
        for (const [position, container] of allContainers(pod).entries()) this.writeContainer(pod, container, position);
        extra();
        for (const event of events) this.writeEvent(event);
      });
    } catch (error) {
      // Nothing of the pass was written (the transaction rolled back): the caller keeps the events
      // and hands them again with the pod's next save, and reports the error.
      if (deletedAt === undefined) {
        this.lastObject.delete(uid);
        this.lastState.delete(uid);
      }
      throw error;
    }
  }

  private writePod(pod: PodRecord, object: string, objectHash: bigint | number | undefined, deletedAt: number | undefined): void {
    const { spec } = pod;
    const changed = objectHash === undefined || this.lastObject.get(spec.uid) !== objectHash;
    const revision = changed ? this.revisions.next() : this.revisions.current;
    if (objectHash !== undefined) this.lastObject.set(spec.uid, objectHash);
    // A static pod's uid hashes node, file and content: a manifest written back revives a deleted
    // pod's uid. The new incarnation's attempts start at 0 and must not mix with the old rows.
    if (deletedAt === undefined) for (const clear of this.sql.clearDeletedIncarnation) clear.run(spec.uid);
    this.sql.upsertPod.run({
      uid: spec.uid,
      pod_key: spec.key,
      namespace: spec.namespace,
      name: spec.fullName,
      config_hash: spec.configHash,
      source: spec.source,
      created_at: pod.createdAt,
      deletion_requested_at: pod.deletionRequestedAt ?? null,
      deleted_at: deletedAt ?? null,
      phase: pod.phase,
      record_json: recordJson(pod),
      object_json: object,
      updated_at: this.clock.now(),
      revision,
      changed: changed ? 1 : 0,
    });
  }

  private writeContainer(pod: PodRecord, container: ContainerRecord, position: number): void {
    const uid = pod.spec.uid;
    this.sql.upsertContainer.run({
      pod_uid: uid,
      name: container.name,
      kind: container.kind,
      position,
      state: container.state,
      reason: container.state === "terminated" ? (container.terminated?.reason ?? null) : (container.waiting?.reason ?? null),
      container_id: container.containerId ?? container.terminated?.containerId ?? null,
      restart_count: restartCountOf(container),
      ready: container.ready ? 1 : 0,
      started: container.started ? 1 : 0,
      // The current attempt's start: a running container's, or the one a terminated container ran from.
      started_at: container.state === "terminated" ? (container.terminated?.startedAt ?? null) : (container.startedAt ?? null),
    });
    if (container.attempts === 0) return;
    // The latest attempt is the current one while running or terminated; once the container waits
    // to restart, the latest attempt's end is lastTermination. A pass sees at most one exit and
    // one start per container, so the current attempt and the last termination cover every start.
    const latest = container.attempts - 1;
    if (container.state === "running") {
      this.writeAttempt(uid, container.name, latest, container.containerId ?? "", container.startedAt, undefined);
      if (container.lastTermination) this.writeAttempt(uid, container.name, latest - 1, container.lastTermination.containerId, undefined, container.lastTermination);
    } else if (container.state === "terminated" && container.terminated) {
      this.writeAttempt(uid, container.name, latest, container.terminated.containerId, undefined, container.terminated);
      if (container.lastTermination) this.writeAttempt(uid, container.name, latest - 1, container.lastTermination.containerId, undefined, container.lastTermination);
    } else if (container.lastTermination) {
      this.writeAttempt(uid, container.name, latest, container.lastTermination.containerId, undefined, container.lastTermination);
    }
  }

  private writeAttempt(podUid: string, container: string, attempt: number, runtimeId: string, startedAt: number | undefined, end: Termination | undefined): void {
    if (attempt < 0) return;
    this.sql.upsertAttempt.run({
      pod_uid: podUid,
      container,
      attempt,
      runtime_id: runtimeId,
      started_at: end?.startedAt ?? startedAt ?? null,
      finished_at: end?.finishedAt ?? null,
      exit_code: end?.exitCode ?? null,
      reason: end?.reason ?? null,
      signal: end?.signal ?? null,
      log_path: runtimeId ? (this.logPathOf(podUid, runtimeId) ?? null) : null,
      kill_cause: end?.killCause ?? null,
      grace_expired: end?.graceExpired ? 1 : 0,
    });
  }

  private writeEvent(event: KubeEvent): void {
    const revision = this.revisions.next();
    const row = this.sql.upsertEvent.get({
      pod_uid: event.podUid,
      pod_key: event.podKey,
      namespace: event.namespace,
      pod: event.pod,
      container: event.container,
      type: event.type,
      reason: event.reason,
      message: event.message,
      at: event.at,
      revision,
    }) as { count: number };
    if (row.count === 1) this.retention.capPodEvents(event.podUid);
  }
}
