/** RFC 3339 at second precision, as the API serializes metav1.Time: 2026-01-01T12:00:00Z. */
export function isoTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
