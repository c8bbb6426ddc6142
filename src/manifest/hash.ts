/**
 * Identity of a static pod. The config hash answers "did this pod change?" (a new hash means the
 * pod is replaced); the UID answers "is this the same pod object?" and, like the kubelet's static
 * pod UID, is derived from node, file path and content so that the same file keeps its UID across
 * agent restarts and an edit gets a new one.
 *
 * Both hash a canonical form (keys sorted at every level, no whitespace), so key order and
 * formatting in the file do not matter. Changing this form changes every hash, which replaces
 * every running pod on upgrade (kubernetes#53644): treat it as a stored format.
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted at every level and no whitespace. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  }
  return sorted;
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** First 32 hex characters of sha256(canonical {node, pod}). `pod` is the decoded manifest. */
export function configHash(pod: unknown, node: string): string {
  return sha256Hex(canonicalJson({ node, pod })).slice(0, 32);
}

/**
 * A UUID-shaped hash of node, absolute file path and decoded manifest. The version nibble is 8
 * (RFC 9562 "custom") and the variant bits are 10, so it is a well-formed UUID that says it was
 * not randomly generated.
 */
export function podUid(node: string, absolutePath: string, pod: unknown): string {
  const hex = sha256Hex(canonicalJson({ node, path: absolutePath, pod })).slice(0, 32).split("");
  hex[12] = "8";
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const s = hex.join("");
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
}
