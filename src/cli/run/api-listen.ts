/** `--api-listen` for `run` and `serve`, and `run --kubelet-listen`. */
import { DEFAULT_KUBELET_LISTEN } from "../../agent/defaults.ts";
import { DEFAULT_API_LISTEN, parseListenAddress } from "../../api/start.ts";
import type { ListenAddress } from "../../api/http/server.ts";
import { UsageError } from "../errors.ts";

/** The listen address, or undefined for `off`; UsageError for a malformed value. */
export function apiListenOption(value: unknown): ListenAddress | undefined {
  const parsed = parseListenAddress(String(value ?? DEFAULT_API_LISTEN));
  if (parsed === "off") return undefined;
  if ("error" in parsed) throw new UsageError(parsed.error);
  return parsed;
}

/** `--kubelet-listen`: the kubelet's own endpoints; undefined for `off`. */
export function kubeletListenOption(value: unknown): ListenAddress | undefined {
  const parsed = parseListenAddress(String(value ?? DEFAULT_KUBELET_LISTEN), "--kubelet-listen");
  if (parsed === "off") return undefined;
  if ("error" in parsed) throw new UsageError(parsed.error);
  return parsed;
}
