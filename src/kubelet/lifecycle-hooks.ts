/**
 * Runs a container's preStop hook. Its time comes out of the grace period, so the caller gives it
 * the whole remaining grace as its timeout and measures what it used.
 */
import { sleep, type Clock } from "../clock.ts";
import type { LifecycleHandler } from "../manifest/types.ts";
import type { Runtime } from "../runtime/runtime.ts";

export interface HookResult {
  ok: boolean;
  message: string;
}

export interface HookTarget {
  containerId: string;
  podIP: string;
}

export async function runPreStop(
  runtime: Pick<Runtime, "execSync">,
  clock: Clock,
  hook: LifecycleHandler,
  target: HookTarget,
  timeoutMs: number,
): Promise<HookResult> {
  switch (hook.type) {
    case "exec": {
      const result = await runtime.execSync(target.containerId, hook.command, timeoutMs);
      if (result.timedOut) return { ok: false, message: `command '${hook.command.join(" ")}' timed out` };
      if (result.exitCode !== 0) {
        return { ok: false, message: `command '${hook.command.join(" ")}' exited with ${result.exitCode}: ${result.output.trim()}` };
      }
      return { ok: true, message: "" };
    }
    case "sleep":
      await sleep(clock, Math.min(hook.seconds * 1000, timeoutMs));
      return { ok: true, message: "" };
    case "httpGet": {
      const controller = new AbortController();
      const cancel = clock.setTimeout(() => controller.abort(new Error("timed out")), timeoutMs);
      const url = `${hook.scheme.toLowerCase()}://${hook.host || target.podIP}:${hook.port}${hook.path}`;
      try {
        const headers = Object.fromEntries(hook.httpHeaders.map((h) => [h.name, h.value]));
        const response = await fetch(url, { signal: controller.signal, headers, tls: { rejectUnauthorized: false } } as RequestInit);
        await response.body?.cancel();
        if (response.status >= 200 && response.status < 400) return { ok: true, message: "" };
        return { ok: false, message: `HTTP lifecycle hook (${hook.path}) failed with statuscode: ${response.status}` };
      } catch (error) {
        return { ok: false, message: `Get "${url}": ${error instanceof Error ? error.message : String(error)}` };
      } finally {
        cancel();
      }
    }
  }
}
