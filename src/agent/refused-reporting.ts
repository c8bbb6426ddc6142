/**
 * How the file source's verdicts reach the user: a refused file becomes a Warning event and a row
 * `get pods` shows as Invalid until the file is fixed or removed; fields a pod runs without become
 * one Warning each, once per pod. A store that cannot record them costs a line, never the source.
 */
import { fieldWarningEvents, refusedManifestEvent } from "../config/refused-manifests.ts";
import type { ManifestWatcherOptions } from "../config/manifest-watcher.ts";
import type { Clock } from "../clock.ts";
import type { KubeEvent } from "../v1/kube-event.ts";
import type { ManifestRules } from "../manifest/admit.ts";
import { refusedPodObject } from "../v1/refused-pod.ts";
import type { SqliteStore } from "../store/pod-store.ts";

export interface RefusedReportingOptions {
  store: Pick<SqliteStore, "saveRefusedManifests" | "saveEvents" | "loadState">;
  rules: ManifestRules;
  clock: Clock;
  /** The files refused now, kept current: a pod whose file turned bad is stopped, and its PodRemoved says why. */
  refusedFiles: Set<string>;
  print: (events: KubeEvent[]) => void;
  log: (message: string) => void;
}

export function refusedManifestReporting(options: RefusedReportingOptions): Pick<ManifestWatcherOptions, "rules" | "checkpointed" | "onRefused" | "onWarnings"> {
  const { store, clock, refusedFiles, print, log } = options;
  const save = (what: string, write: () => void) => {
    try {
      write();
    } catch (error) {
      log(`recording ${what} failed: ${(error as Error).message}`);
    }
  };
  return {
    rules: options.rules,
    checkpointed: new Map(store.loadState().pods.filter((pod) => !pod.spec.api).map((pod) => [pod.spec.source, pod.spec.key])),
    onRefused: (refused, fresh) => {
      refusedFiles.clear();
      for (const entry of refused) refusedFiles.add(entry.file);
      const events = fresh.map((entry) => refusedManifestEvent(entry, clock.now()));
      print(events);
      save("refused manifests", () => store.saveRefusedManifests(refused, events, refusedPodObject));
    },
    onWarnings: (pod, warnings) => {
      const events = fieldWarningEvents(pod, warnings, clock.now());
      print(events);
      save(`warnings of pod ${pod.key}`, () => store.saveEvents(events));
    },
  };
}
