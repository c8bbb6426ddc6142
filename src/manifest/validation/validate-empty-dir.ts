/**
 * An emptyDir volume's `medium` and `sizeLimit`, as the API server takes them (validateVolumeSource:
 * a sizeLimit is a quantity, never negative) and as minikubelet can provide them: on the node's
 * disk ("") or in memory ("Memory", a tmpfs). Other media are refused here, where the kubelet's
 * plugin fails to set them up; HugePages too: minikubelet has no hugetlbfs to mount.
 */
import type { Fields } from "../fields.ts";
import { QuantityError, quantityFromValue } from "../quantity.ts";
import type { Volume } from "../types.ts";

const MEDIA = ["", "Memory"] as const;

export function readEmptyDir(item: Fields, name: string): Extract<Volume, { type: "emptyDir" }> {
  const volume: Extract<Volume, { type: "emptyDir" }> = { name, type: "emptyDir" };
  const fields = item.object("emptyDir");
  if (!fields) return volume;
  const medium = fields.string("medium");
  if (medium === "Memory") volume.medium = "Memory";
  else if (medium !== undefined && !(MEDIA as readonly string[]).includes(medium)) {
    // The API server stores any medium; the kubelet's emptyDir plugin refuses to set up one it does not know.
    const why = medium.startsWith("HugePages") ? "hugepages-backed emptyDir volumes are not supported by minikubelet" : `unknown storage medium ${JSON.stringify(medium)} (supported: "", "Memory")`;
    fields.fail("medium", why);
  }
  const raw = fields.raw("sizeLimit");
  if (raw === undefined) return volume;
  try {
    const limit = quantityFromValue(raw);
    if (limit.sign() < 0) fields.fail("sizeLimit", "Forbidden: SizeLimit field must be a valid resource quantity");
    // Zero is no limit, as the kubelet reads it (a size of 0 is never exceeded and mounts an unsized tmpfs).
    else if (limit.sign() > 0) {
      volume.sizeLimit = limit.toString();
      volume.sizeLimitBytes = Number(limit.value());
    }
  } catch (error) {
    if (!(error instanceof QuantityError)) throw error;
    fields.issues.addUndecodable(fields.at("sizeLimit"), error.message);
  }
  return volume;
}
