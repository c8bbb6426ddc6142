/**
 * Whose a process-runtime directory is. The labels in a container's `config.json` (in the
 * `labels.json` beside it, for a container of an earlier version) and a pod's `sandbox.json` are
 * the only proof of which database's agent created it, and an agent never removes what it cannot
 * prove it created: a record that is missing (its directory still there), unreadable or corrupt
 * proves nothing, so the directory is not ours. It is not listed (adoption neither adopts nor
 * removes it), its removal is refused, and its processes keep running; the runtime says so once per
 * directory, not on every listing. A directory that is gone is nothing to act on.
 */
import { isOwnedBy } from "../labels.ts";
import { isContainerRecord, isLabelMap, isSandboxRecord, readRecordFile, type ContainerRecord, type RecordFile, type SandboxRecord } from "./process-files.ts";

/** A container's record with its labels, wherever they were kept. */
export type LabelledContainerRecord = ContainerRecord & { labels: Record<string, string> };

/** What a directory's record proves: ours (with the record), another database's, nothing (and why), or the directory is gone. */
export type Ownership<T> = { verdict: "ours"; record: T } | { verdict: "theirs" } | { verdict: "unproven"; problem: string } | { verdict: "gone" };

export interface ProcessOwnershipOptions {
  /** The agent's database identity (store/identity.ts); undefined: not asked, every readable record is ours. */
  owner: string | undefined;
  /** Where a directory left alone for want of proof is reported, once per directory. */
  log: (message: string) => void;
}

export class ProcessOwnership {
  /** Directories reported as unproven; one leaves when its record reads again or it is gone. */
  private readonly reported = new Set<string>();

  constructor(private readonly options: ProcessOwnershipOptions) {}

  /** The container in `dir`, by the labels in its config.json, or in its labels.json when the record has none (an earlier version's). */
  container(dir: string): Ownership<LabelledContainerRecord> {
    const config = readRecordFile(dir, "config.json", "a container record", isContainerRecord);
    return this.judge(dir, config.state === "read" ? withLabels(dir, config.value) : config, (record) => record.labels);
  }

  /** The pod sandbox in `dir`, by its sandbox.json. */
  sandbox(dir: string): Ownership<SandboxRecord> {
    return this.judge(dir, readRecordFile(dir, "sandbox.json", "a sandbox record", isSandboxRecord), (record) => record.labels);
  }

  /**
   * For a listing: the record when `what` (`container <id>`, `sandbox <uid>`) is provably ours,
   * else undefined; an unproven one is reported, once per directory.
   */
  listed<T>(what: string, dir: string, ownership: Ownership<T>): T | undefined {
    if (ownership.verdict === "unproven" && !this.reported.has(dir)) {
      this.reported.add(dir);
      this.options.log(`${what}: ${ownership.problem}: not provably created by this agent's database, so it is left alone (neither adopted nor removed, its processes left running)`);
    }
    return ownership.verdict === "ours" ? ownership.record : undefined;
  }

  /** For a removal: false when the directory is gone (nothing to remove); throws unless `what` is provably ours. */
  removable<T>(what: string, ownership: Ownership<T>): boolean {
    const why = refusal(what, ownership);
    if (why !== undefined) throw new Error(`${why}: not removed`);
    return ownership.verdict === "ours";
  }

  private judge<T>(dir: string, file: RecordFile<T>, labelsOf: (record: T) => Record<string, string>): Ownership<T> {
    if (file.state === "unusable") return { verdict: "unproven", problem: file.problem };
    this.reported.delete(dir);
    if (file.state === "gone") return { verdict: "gone" };
    return isOwnedBy(labelsOf(file.value), { database: this.options.owner }) ? { verdict: "ours", record: file.value } : { verdict: "theirs" };
  }
}

function withLabels(dir: string, record: ContainerRecord): RecordFile<LabelledContainerRecord> {
  if (record.labels) return { state: "read", value: { ...record, labels: record.labels } };
  const labels = readRecordFile(dir, "labels.json", "a map of labels", isLabelMap);
  return labels.state === "read" ? { state: "read", value: { ...record, labels: labels.value } } : labels;
}

/** Why `what` may not be acted on (signalled, removed), or undefined when it is ours or gone. */
export function refusal<T>(what: string, ownership: Ownership<T>): string | undefined {
  switch (ownership.verdict) {
    case "ours":
    case "gone":
      return undefined;
    case "theirs":
      return `${what} was not created by this agent's database`;
    case "unproven":
      return `${what} cannot be proven created by this agent's database (${ownership.problem})`;
    default:
      return assertNever(ownership);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected ownership ${JSON.stringify(value)}`);
}
