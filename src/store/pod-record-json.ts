/**
 * The loop's record as the pods row keeps it (record_json, for adoption after a restart), without
 * the manifest: the row's object_json holds the pod's spec already, so the record takes it from
 * there when it is read back, and each row stores the manifest once.
 */
import type { PodRecord } from "../kubelet/pod-state.ts";
import type { V1Pod } from "../v1/v1.ts";

export function recordJson(pod: PodRecord): string {
  return JSON.stringify({ ...pod, spec: { ...pod.spec, manifest: undefined } });
}

/** The record of a row, its manifest rebuilt from the served object's spec (rows before 0009 kept their own). */
export function parseRecord(recordJson: string, objectJson: string): PodRecord {
  const record = JSON.parse(recordJson) as PodRecord;
  if (record.spec.manifest === undefined) record.spec.manifest = manifestOf(JSON.parse(objectJson) as V1Pod);
  return record;
}

/** The manifest a served Pod was drawn from: its spec less the node the agent set (podObject adds it back). */
function manifestOf(object: V1Pod): Record<string, unknown> {
  const { nodeName: _setByTheAgent, ...spec } = object.spec as V1Pod["spec"] & Record<string, unknown>;
  const generateName = (object.metadata as { generateName?: string }).generateName;
  return { apiVersion: "v1", kind: "Pod", metadata: { name: object.metadata.name, ...(generateName && { generateName }) }, spec };
}
