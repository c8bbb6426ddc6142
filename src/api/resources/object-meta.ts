/**
 * What a create does to the metadata it is given, as the API server's BeforeCreate does for every
 * resource: the fields only the server sets are dropped, and `generateName` becomes a name; and
 * ValidateObjectMeta's check of the labels, which every write of metadata meets.
 */
import { isPlainObject } from "../../manifest/fields.ts";
import { checkLabelValue, checkQualifiedName } from "../../manifest/names.ts";
import type { StatusCause } from "../http/status.ts";

/** What the server sets, never the client: dropped from the submitted metadata, as the API server resets them. */
export const SERVER_METADATA = ["uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink", "managedFields"];
/** The API server's generateName alphabet (no vowels, no look-alikes) and suffix length. */
const NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const NAME_SUFFIX_LENGTH = 5;

/** metadata.name, else generateName with the API server's random suffix; "" lets validation say it is required. */
export function createdName(metadata: Record<string, unknown>): string {
  if (typeof metadata.name === "string" && metadata.name !== "") return metadata.name;
  if (typeof metadata.generateName !== "string" || metadata.generateName === "") return "";
  return generatedName(metadata.generateName);
}

/** `base` and the API server's random suffix (its SimpleNameGenerator), as generateName and the admission plugins name things. */
export function generatedName(base: string): string {
  let suffix = "";
  for (let i = 0; i < NAME_SUFFIX_LENGTH; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return `${base}${suffix}`;
}

/** The submitted metadata without what only the server sets. */
export function clientMetadata(metadata: Record<string, unknown>): Record<string, unknown> {
  const kept = { ...metadata };
  for (const field of SERVER_METADATA) delete kept[field];
  return kept;
}

/** A creation time as metadata.creationTimestamp holds it: whole seconds. */
export function creationTime(now: number): number {
  return Math.floor(now / 1000) * 1000;
}

/** The labels' keys and values, as ValidateObjectMeta checks them. */
export function labelCauses(labels: Record<string, string> | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels ?? {})) {
    const keyProblem = checkQualifiedName(key);
    if (keyProblem) causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`, field: "metadata.labels" });
    const valueProblem = checkLabelValue(value);
    if (valueProblem) causes.push({ reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify(value)}: ${valueProblem}`, field: `metadata.labels` });
  }
  return causes;
}

/** A map of strings (labels, annotations), or undefined when absent; other values are dropped, as decoding would refuse them. */
export function stringMap(value: unknown): Record<string, string> | undefined {
  if (!isPlainObject(value)) return undefined;
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
}
