/**
 * The body of a `pods/NAME/status` strategic merge patch, as the kubelet's PatchPodStatus builds it
 * (pkg/util/pod: a two-way merge patch from the old status to the new, with the pod's uid in the
 * new object only, so the patch carries `metadata.uid` and the API server refuses it for another
 * incarnation of the name). The list strategies are v1.PodStatus's own: `conditions` merge by
 * `type`, `podIPs` and `hostIPs` by `ip` (each with `$setElementOrder` and `$patch: delete` for a
 * removed entry), and the container status lists carry no patch strategy in the v1 API, so a change
 * replaces the whole list, exactly as apimachinery's CreateTwoWayMergePatch does for them.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** v1.PodStatus's lists that merge, by their patchMergeKey. */
const MERGE_KEYS: Record<string, string> = { conditions: "type", podIPs: "ip", hostIPs: "ip" };

/**
 * The status patch for the pod `uid` from `old` (what the API server last acknowledged) to `next`;
 * undefined when nothing in the status differs (the kubelet sends no such patch).
 */
export function podStatusPatch(uid: string, old: object | undefined, next: object): JsonObject | undefined {
  const status = diffObjects((old ?? {}) as JsonObject, next as JsonObject, MERGE_KEYS);
  if (Object.keys(status).length === 0) return undefined;
  return { metadata: { uid }, status };
}

function diffObjects(old: JsonObject, next: JsonObject, mergeKeys: Record<string, string>): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(next)) {
    if (value === undefined) continue;
    const before = old[key];
    if (deepEqual(before, value)) continue;
    const mergeKey = mergeKeys[key];
    if (mergeKey && Array.isArray(value) && Array.isArray(before)) {
      const list = diffMergeList(before as JsonObject[], value as JsonObject[], mergeKey);
      if (list.entries.length > 0) patch[key] = list.entries;
      if (list.order) patch[`$setElementOrder/${key}`] = list.order;
    } else if (isObject(value) && isObject(before)) {
      const nested = diffObjects(before, value, {});
      if (Object.keys(nested).length > 0) patch[key] = nested;
    } else {
      patch[key] = value;
    }
  }
  // A field the new status no longer has is removed, as a null in a merge patch.
  for (const key of Object.keys(old)) if (old[key] !== undefined && next[key as keyof typeof next] === undefined) patch[key] = null;
  return patch;
}

/**
 * A merge list's changes: each new or changed element (a changed one as its own diff, with its
 * key), a `$patch: delete` for each removed one, and the new order of the keys whenever anything
 * changed (CreateTwoWayMergePatch's `$setElementOrder`).
 */
function diffMergeList(old: JsonObject[], next: JsonObject[], mergeKey: string): { entries: JsonObject[]; order?: JsonObject[] } {
  const oldByKey = new Map(old.map((item) => [item[mergeKey], item]));
  const nextKeys = new Set(next.map((item) => item[mergeKey]));
  const entries: JsonObject[] = [];
  for (const item of next) {
    const before = oldByKey.get(item[mergeKey]);
    if (!before) {
      entries.push(item);
      continue;
    }
    const changed = diffObjects(before, item, {});
    if (Object.keys(changed).length > 0) entries.push({ ...changed, [mergeKey]: item[mergeKey] ?? null });
  }
  for (const item of old) if (!nextKeys.has(item[mergeKey])) entries.push({ $patch: "delete", [mergeKey]: item[mergeKey] ?? null });
  const reordered = old.length === next.length && old.some((item, index) => item[mergeKey] !== next[index]?.[mergeKey]);
  if (entries.length === 0 && !reordered) return { entries };
  return { entries, order: next.map((item) => ({ [mergeKey]: item[mergeKey] ?? null })) };
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => deepEqual(item, other[index]));
  }
  const left = Object.entries(a).filter(([, value]) => value !== undefined);
  const right = b as Record<string, unknown>;
  const rightCount = Object.values(right).filter((value) => value !== undefined).length;
  return left.length === rightCount && left.every(([key, value]) => deepEqual(value, right[key]));
}
