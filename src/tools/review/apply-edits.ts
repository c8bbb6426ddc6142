/**
 * `-o yaml`: applies the findings' edits to the file's `yaml` Documents in place, so the user's
 * comments, key order and formatting stay as they were, and leaves a `# review:` comment on each
 * changed field (after a changed value, above an added or emptied key).
 */
import { isMap, isScalar, type Document, type Pair, type Scalar } from "yaml";
import type { FieldPath } from "../../manifest/errors.ts";
import type { Edit } from "./edits.ts";

export function applyEdits(document: Document, edits: readonly Edit[]): void {
  const deleted: FieldPath[] = [];
  for (const edit of edits) {
    const path = [...edit.path];
    // Two findings may touch one probe (a removed httpGet and its host): the first edit wins.
    if (deleted.some((prefix) => startsWith(path, prefix))) continue;
    if (edit.op === "delete") {
      deleted.push(path);
      if (!document.hasIn(path)) continue;
      document.deleteIn(path);
      commentAboveKey(document, path.slice(0, -1), edit.comment);
      continue;
    }
    document.setIn(path, document.createNode(edit.value));
    const node = document.getIn(path, true);
    if (isScalar(node) && !inFlow(document, path)) appendComment(node, "comment", edit.comment);
    else commentAboveKey(document, path, edit.comment);
  }
}

/** A comment on the line above the key at `path` (the last element must be a map key). */
function commentAboveKey(document: Document, at: FieldPath, comment: string): void {
  // A comment inside `{ ... }` would break the flow map over lines: it goes above the block key holding it.
  let path = at;
  while (path.length > 1 && inFlow(document, path)) path = path.slice(0, -1);
  if (comment === "" || path.length === 0) return;
  const parent = document.getIn(path.slice(0, -1), true);
  const key = path[path.length - 1];
  if (!isMap(parent)) return;
  const pair = parent.items.find((item) => (isScalar(item.key) ? item.key.value : item.key) === key) as Pair<unknown, unknown> | undefined;
  if (!pair) return;
  if (!isScalar(pair.key)) pair.key = document.createNode(pair.key);
  appendComment(pair.key as Scalar, "commentBefore", comment);
}

/** Whether the field at `path` sits in a flow collection (`{...}` or `[...]`) at any depth. */
function inFlow(document: Document, path: FieldPath): boolean {
  for (let depth = 0; depth < path.length; depth++) {
    const node = document.getIn(path.slice(0, depth), true) as { flow?: boolean } | undefined;
    if (node?.flow) return true;
  }
  return false;
}

function appendComment(node: Scalar, where: "comment" | "commentBefore", comment: string): void {
  if (comment === "") return;
  const text = ` ${comment}`;
  node[where] = node[where] ? `${node[where]}\n${text}` : text;
}

function startsWith(path: FieldPath, prefix: FieldPath): boolean {
  return prefix.length <= path.length && prefix.every((part, index) => path[index] === part);
}
