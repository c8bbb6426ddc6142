/**
 * A correction as data: the reviewer says which field to set or remove and why; the YAML writer
 * applies it to the document and leaves the reason as a comment beside the field.
 */
import type { FieldPath } from "../../manifest/errors.ts";

export type Edit =
  | { op: "set"; path: FieldPath; value: unknown; comment: string }
  | { op: "delete"; path: FieldPath; comment: string };
