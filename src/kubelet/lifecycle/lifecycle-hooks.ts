/**
 * Runs one lifecycle handler (postStart or preStop) as the kubelet's handlerRunner does
 * (pkg/kubelet/lifecycle/handlers.go): an exec fails on a non-zero exit, an httpGet only when the
 * request cannot be made (any response, 500 included, is success: the kubelet discards it), a
 * sleep only when it is cut short. A failure carries the kubelet's message, which it keeps out of
 * the event (secrets) and shows as the container's waiting message after a postStart failure.
 */
import { sleep, type Clock } from "../../clock.ts";
import type { LifecycleHandler } from "../../manifest/types.ts";
import type { Runtime } from "../../runtime/runtime.ts";

export interface HookResult {
  ok: boolean;
  /** Empty on success; else `Exec lifecycle hook ([cmd]) for Container "c" in Pod "p_ns(uid)" failed - error: ...`. */
  message: string;
}

export interface HookTarget {
  containerId: string;
  podIP: string;
  /** The container's name and the pod as the kubelet names it in messages (`NAME_NAMESPACE(UID)`). */
  container: string;
  pod: string;
}

/** The error text of a sleep cut short, the kubelet's runSleepHandler's. */
export const SLEEP_CUT_SHORT = "container terminated before sleep hook finished";

/**
 * Runs `hook` against `target`; a command or request still running at `timeoutMs` fails, and
 * `signal` cuts a sleep or a request short (the container is being stopped). Never rejects.
 */
export async function runLifecycleHandler(
  runtime: Pick<Runtime, "execSync">,
  clock: Clock,
  hook: LifecycleHandler,
  target: HookTarget,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<HookResult> {
  const where = `for Container ${JSON.stringify(target.container)} in Pod ${JSON.stringify(target.pod)}`;
  switch (hook.type) {
    case "exec": {
      const failed = (error: string, output: string): HookResult => ({
        ok: false,
        message: `Exec lifecycle hook ([${hook.command.join(" ")}]) ${where} failed - error: ${error}, message: ${JSON.stringify(output)}`,
      });
      try {
        const result = await runtime.execSync(target.containerId, hook.command, timeoutMs, signal);
        if (result.timedOut) return failed(`command '${hook.command.join(" ")}' timed out`, result.output);
        if (result.exitCode !== 0) return failed(`command '${hook.command.join(" ")}' exited with ${result.exitCode}: ${result.output}`, result.output);
        return { ok: true, message: "" };
      } catch (error) {
        return failed(error instanceof Error ? error.message : String(error), "");
      }
    }
    case "sleep":
      try {
        await sleep(clock, Math.min(hook.seconds * 1000, timeoutMs), signal);
        return { ok: true, message: "" };
      } catch {
        return { ok: false, message: `Sleep lifecycle hook (${hook.seconds}) ${where} failed - error: ${SLEEP_CUT_SHORT}` };
      }
    case "httpGet": {
      const controller = new AbortController();
      const cancel = clock.setTimeout(() => controller.abort(new Error("timed out")), timeoutMs);
      const onAbort = () => controller.abort(new Error("context canceled"));
      signal?.addEventListener("abort", onAbort, { once: true });
      const url = `${hook.scheme.toLowerCase()}://${hook.host || target.podIP}:${hook.port}${hook.path}`;
      try {
        const headers = Object.fromEntries(hook.httpHeaders.map((h) => [h.name, h.value]));
        const response = await fetch(url, { signal: controller.signal, headers, tls: { rejectUnauthorized: false } } as RequestInit);
        await response.body?.cancel();
        return { ok: true, message: "" };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return { ok: false, message: `HTTP lifecycle hook (${hook.path}) ${where} failed - error: Get ${JSON.stringify(url)}: ${reason}` };
      } finally {
        cancel();
        signal?.removeEventListener("abort", onAbort);
      }
    }
  }
}
