/**
 * A boolean query parameter as the API server reads one. Its query decoding (apimachinery's
 * runtime.Convert_Slice_string_To_bool, behind ListOptions' watch and allowWatchBookmarks,
 * sendInitialEvents, and PodLogOptions' follow, previous and timestamps) is not strconv.ParseBool:
 * only `0` and `false` (in any case) are false, and every other value given is true, a bare
 * `?watch` and the Python client's `watch=True` included. No value is refused.
 */

/** The parameter's value as the API server decodes it; undefined when the query does not name it. */
export function queryFlag(query: URLSearchParams, name: string): boolean | undefined {
  // The API server reads the first value when a parameter is repeated.
  const value = query.get(name);
  if (value === null) return undefined;
  return !(value === "0" || value.toLowerCase() === "false");
}
