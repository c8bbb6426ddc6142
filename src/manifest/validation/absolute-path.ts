/**
 * Paths on this node and in its containers are Linux paths, so they must be absolute, where the API
 * server (which serves Windows nodes too) lets any path through. A Windows path (`C:\etc\foo`) is
 * named as one: its pod was written for a Windows node.
 */
const WINDOWS_PATH = /^[A-Za-z]:[\\/]|^\\\\/;

/** Why `path` cannot be used here, or undefined when it is absolute (or empty: `required` says that). */
export function absolutePathProblem(path: string): string | undefined {
  if (path === "" || path.startsWith("/")) return undefined;
  const found = `(found ${JSON.stringify(path)})`;
  return WINDOWS_PATH.test(path) ? `must be an absolute path: a Windows path ${found} is for a Windows node, and this node runs Linux` : `must be an absolute path ${found}`;
}
