/** A UUID-shaped uid derived from `seed`: stable across requests and restarts for the same seed. */
export function stableUid(seed: string): string {
  const hex = new Bun.CryptoHasher("sha1").update(seed).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
