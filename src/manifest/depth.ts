/**
 * How deep a manifest nests, measured without recursion (a deep file must not overflow the stack
 * of the code that measures it).
 */

/**
 * Whether a decoded value nests deeper than `max` (a scalar is depth 0, `[]` is 1).
 * Iterative: safe on any value a decoder returned.
 */
export function valueExceedsDepth(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth + 1 > max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}

/**
 * A fast early refusal for YAML text: true when the text plainly nests deeper than `max`, as
 * flow brackets left open or block indicators stacked on one line (`- - - - x`). Not exact
 * (brackets in quoted text count too) and not needed for safety: the decoded value is measured
 * anyway. It spares the agent the YAML parser's quadratic time on such a file.
 */
export function exceedsDepth(text: string, max: number): boolean {
  let flow = 0;
  let lineStart = true;
  let stacked = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === "\n") {
      lineStart = true;
      stacked = 0;
      continue;
    }
    if (char === "[" || char === "{") flow++;
    else if ((char === "]" || char === "}") && flow > 0) flow--;
    if (lineStart) {
      const next = text[index + 1];
      if ((char === "-" || char === "?") && (next === " " || next === "\t" || next === "\n" || next === undefined)) stacked++;
      else if (char !== " " && char !== "\t") lineStart = false;
    }
    if (flow + stacked > max) return true;
  }
  return false;
}
