/**
 * What a create does to the metadata it is given, as the API server's BeforeCreate does for every
 * resource: the fields only the server sets are dropped, and `generateName` becomes a name.
 */

/** What the server sets, never the client: dropped from the submitted metadata, as the API server resets them. */
export const SERVER_METADATA = ["uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink", "managedFields"];
/** The API server's generateName alphabet (no vowels, no look-alikes) and suffix length. */
const NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
const NAME_SUFFIX_LENGTH = 5;

/** metadata.name, else generateName with the API server's random suffix; "" lets validation say it is required. */
export function createdName(metadata: Record<string, unknown>): string {
  if (typeof metadata.name === "string" && metadata.name !== "") return metadata.name;
  if (typeof metadata.generateName !== "string" || metadata.generateName === "") return "";
  let suffix = "";
  for (let i = 0; i < NAME_SUFFIX_LENGTH; i++) suffix += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return `${metadata.generateName}${suffix}`;
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
