/**
 * The API server's JSON decoder (encoding/json's scanner, which sigs.k8s.io/json keeps) refuses a
 * document nested deeper than 10,000 arrays and objects. JSON.parse takes any depth, and what reads
 * the value after it (validation, a patch, structuredClone) recurses and overflows the stack far
 * below what a 3 MiB body can nest, so a body is measured before it is parsed.
 */

/** encoding/json's maxNestingDepth. */
export const MAX_JSON_DEPTH = 10_000;

/**
 * The scanner's error for `text` when it nests past MAX_JSON_DEPTH (`invalid character '{'
 * exceeded max depth`, naming the bracket that went one level too deep), else undefined. Counts
 * brackets outside strings only; one pass, no recursion, whatever else is wrong with the text.
 */
export function jsonDepthError(text: string): string | undefined {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      if (++depth > MAX_JSON_DEPTH) return `invalid character '${text[index]}' exceeded max depth`;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return undefined;
}
