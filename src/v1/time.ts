/** RFC 3339 at second precision, as the API serializes metav1.Time: 2026-01-01T12:00:00Z. */
export function isoTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/** metav1.MicroTime (a Lease's renewTime): exactly six fractional digits, or kubectl refuses the object. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
