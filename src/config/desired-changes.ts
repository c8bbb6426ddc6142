/**
 * Which desired sets are worth a full pass. The file source offers its whole set on every rescan
 * (every --resync, a backstop for missed directory events), and a full pass syncs every pod: with a
 * thousand pods that is most of an idle agent's CPU, though a set equal to the last one synced tells
 * the loop nothing it does not hear through the PLEG and its own timers. So an unchanged set is
 * dropped: a runtime event that was lost is the PLEG's relist to find (pleg/), not a full pass's.
 */
import type { PodKey, PodSpec } from "../manifest/types.ts";

export class DesiredChanges {
  private last?: Map<PodKey, string>;

  /** True when `desired` differs from the last set it said yes to. */
  worthSyncing(desired: ReadonlyMap<PodKey, PodSpec>): boolean {
    const next = new Map([...desired].map(([key, spec]) => [key, fingerprint(spec)]));
    if (this.last && sameEntries(this.last, next)) return false;
    this.last = next;
    return true;
  }
}

/**
 * What `Kubelet.sync` reacts to in a spec: a file pod's uid hashes its node, file and content, and
 * its config hash the spec; an API pod also carries its labels, annotations and deletion, which its
 * hash does not cover.
 */
function fingerprint(spec: PodSpec): string {
  if (spec.api) return JSON.stringify([spec.uid, spec.configHash, spec.source, spec.api, spec.labels, spec.annotations]);
  return `${spec.uid}\n${spec.configHash}\n${spec.source}`;
}

function sameEntries(a: ReadonlyMap<PodKey, string>, b: ReadonlyMap<PodKey, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [key, value] of a) if (b.get(key) !== value) return false;
  return true;
}
