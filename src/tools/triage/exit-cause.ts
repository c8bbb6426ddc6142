/**
 * Why an attempt ended, from its exit code and our own records of what we did to it (stops.ts):
 * never guessed from the code alone where the records can tell (137 and 143 above all). Pure.
 */
import { goDuration } from "../../printers/go-duration.ts";
import { restartDecision, ruleText } from "../../kubelet/restart-policy.ts";
import type { ContainerRestartRule, RestartPolicy } from "../../manifest/types.ts";
import type { ContainerKind, PodFacts } from "./facts.ts";
import { signalName } from "./signals.ts";
import type { StopFacts } from "./stops.ts";

export type Cause =
  | "start-error"
  | "completed-restarted"
  | "completed"
  | "app-error"
  | "app-exit-code"
  | "not-executable"
  | "command-not-found"
  | "oom-killed"
  | "liveness-kill"
  | "startup-kill"
  | "grace-expired"
  | "poststart-failed"
  | "stopped"
  | "outside-sigkill"
  | "outside-sigterm"
  | "container-lost"
  | "segfault"
  | "signal";

/** Who ended the attempt: the process itself (a crash or a finish), a probe, the agent, the runtime, or someone else. */
export type EndedBy = "itself" | "probe" | "agent" | "runtime" | "outside" | "never-started";

export interface Termination {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  /** How long it ran, when both ends are known. */
  ranMs?: number;
}

export interface ExitCause {
  cause: Cause;
  endedBy: EndedBy;
  /** One line: what happened. */
  title: string;
  /** What to change, as a runbook would say it. */
  change: string;
}

/** The runtime's reasons for a container it could not create or start (exit 128, no process). */
const START_REASONS = new Set(["StartError", "CreateContainerError", "CreateContainerConfigError", "RunContainerError", "ContainerCannotRun"]);

/** Who the exit happened to: its kind, the pod's policy, and the container's own policy and rules when it has them (KEP-5307). */
export interface ExitContext {
  kind: ContainerKind;
  restartPolicy: PodFacts["restartPolicy"];
  own?: { restartPolicy?: RestartPolicy; restartPolicyRules?: ContainerRestartRule[] };
}

/** What starts a finished (exit 0) app container or sidecar again, or undefined when nothing does. */
function restartsAfterSuccess(context: ExitContext): string | undefined {
  if (context.kind === "init") return undefined;
  const { restart, decider } = restartDecision(context.restartPolicy, context.kind, context.own ?? {}, 0);
  if (!restart) return undefined;
  switch (decider.by) {
    case "sidecar":
    case "pod":
      return "restartPolicy Always";
    case "container":
      return "the container's restartPolicy Always";
    case "rule":
      return `restartPolicyRules[${decider.index}] (${ruleText(decider.rule)})`;
  }
}

export function explainExit(end: Termination, stops: StopFacts, context: ExitContext): ExitCause {
  const code = end.exitCode;
  const ran = end.ranMs === undefined ? "" : ` after ${goDuration(end.ranMs)}`;
  if (end.reason === "OOMKilled") {
    return {
      cause: "oom-killed",
      endedBy: "runtime",
      title: `OOMKilled: the kernel killed it for exceeding its memory limit (exit ${code})${ran}`,
      change: "Raise resources.limits.memory, or find what grows (a leak, a cache without a bound, a heap sized for the host rather than the container).",
    };
  }
  if (end.reason !== undefined && START_REASONS.has(end.reason)) {
    return {
      cause: "start-error",
      endedBy: "never-started",
      title: `The runtime could not start it (${end.reason}, exit ${code})${end.message ? `: ${end.message}` : ""}`,
      change: "Fix what the message names: the command or entrypoint, the image, a mount or the working directory. The process never ran, so it left no log.",
    };
  }
  if (end.reason === "ContainerStatusUnknown") {
    return {
      cause: "container-lost",
      endedBy: "runtime",
      title: `The runtime lost the container (ContainerStatusUnknown, reported as exit ${code}): it was gone when the agent looked`,
      change: "Look at who removes containers on this host (a docker rm, a cleanup job, a runtime restart) rather than at the program.",
    };
  }
  if (stops.probeKill) {
    const { probe } = stops.probeKill;
    const honoured = code === 143 || (code < 128 && !stops.graceExpired);
    const how = stops.graceExpired ? `it ignored SIGTERM and was killed when the grace period ran out (exit ${code})` : honoured ? `it honoured SIGTERM (exit ${code})` : `exit ${code}`;
    return {
      cause: probe === "liveness" ? "liveness-kill" : "startup-kill",
      endedBy: "probe",
      title: `The ${probe} probe killed a running process${ran}: ${how}`,
      change:
        probe === "liveness"
          ? "Check the probe before the code: a liveness probe must fail only when restarting helps (not on a slow dependency), with a timeout and failureThreshold that fit the process. A hang it rightly catches is the program's to fix."
          : "The process did not pass its startup probe in time: raise startupProbe.failureThreshold x periodSeconds to cover the real start time, or find why the start is slow.",
    };
  }
  // The kubelet's Killing message for a container whose postStart hook failed.
  if (stops.agentStop?.event.message === "FailedPostStartHook") {
    return {
      cause: "poststart-failed",
      endedBy: "agent",
      title: `Killed because its postStart hook failed (FailedPostStartHook), exit ${code}${ran}: the hook failed, not the program`,
      change: "Fix the postStart hook: the container waited with reason PostStartHookError and the hook's message (the agent's log has it too), and it counts as started only once the hook succeeds.",
    };
  }
  if (stops.graceExpired) {
    return {
      cause: "grace-expired",
      endedBy: "agent",
      title: `Stopped by the agent and killed when the grace period ran out (exit ${code}): the process did not exit on SIGTERM`,
      change: "Handle SIGTERM in the program (a shell or PID 1 without a handler ignores it), or give it a longer terminationGracePeriodSeconds if its shutdown is slow.",
    };
  }
  if (stops.agentStop) {
    return {
      cause: "stopped",
      endedBy: "agent",
      title: `Stopped by the agent (${stops.agentStop.event.message}), exit ${code}: not a crash`,
      change: "Nothing in the program: the agent stopped it because the pod was removed, replaced or stopped with the agent.",
    };
  }
  if (code === 0) {
    const restarts = restartsAfterSuccess(context);
    return restarts
      ? {
          cause: "completed-restarted",
          endedBy: "itself",
          title: `The program finished successfully (exit 0, Completed)${ran}, and ${restarts} starts it again`,
          change: "A job-like program under restartPolicy Always loops into CrashLoopBackOff with exit code 0: keep it running (a server, a loop), or run it as a Job / under restartPolicy OnFailure or Never.",
        }
      : { cause: "completed", endedBy: "itself", title: `The program finished successfully (exit 0, Completed)${ran}`, change: "Nothing: it did its job." };
  }
  if (code === 126) {
    return {
      cause: "not-executable",
      endedBy: "itself",
      title: `The command was found but could not be executed (exit 126)${ran}: not executable, or not a program for this machine`,
      change: "Check the file's execute bit and its format (a script without its interpreter line, a binary for another architecture).",
    };
  }
  if (code === 127) {
    return {
      cause: "command-not-found",
      endedBy: "itself",
      title: `Command not found (exit 127)${ran}: the shell could not find the program it was asked to run`,
      change: "Fix the command or args (a typo, a program missing from the image or from PATH).",
    };
  }
  if (code === 128) {
    return {
      cause: "start-error",
      endedBy: "never-started",
      title: `The runtime could not start it (exit 128)${end.message ? `: ${end.message}` : ""}`,
      change: "Fix what the runtime names: the command or entrypoint, the image, a mount. The process never ran, so it left no log.",
    };
  }
  if (code === 137) {
    return {
      cause: "outside-sigkill",
      endedBy: "outside",
      title: `Killed by SIGKILL from outside the agent (exit 137)${ran}: no OOMKilled recorded, no probe kill and no stop by the agent before the exit`,
      change: "Find who sent it: a user's kill -9, a host-wide OOM killer (dmesg), another supervisor. The agent did not.",
    };
  }
  if (code === 143) {
    return {
      cause: "outside-sigterm",
      endedBy: "outside",
      title: `Ended by SIGTERM from outside the agent (exit 143)${ran}: no probe kill and no stop by the agent before the exit`,
      change: "Find who sent SIGTERM (a user, another supervisor, the program's own children); the agent did not stop it.",
    };
  }
  if (code === 139) {
    return {
      cause: "segfault",
      endedBy: "itself",
      title: `Segmentation fault (exit 139, SIGSEGV)${ran}: the program read or wrote memory it does not own`,
      change: "A bug in the program or a native library (or a library built for another libc); its core dump or the last log lines point at it.",
    };
  }
  if (code > 128 && code < 256) {
    const signal = end.signal ?? code - 128;
    const name = signalName(signal);
    return {
      cause: "signal",
      endedBy: "outside",
      title: `Killed by signal ${signal}${name ? ` (${name})` : ""} (exit ${code} = 128 + ${signal})${ran}`,
      change: name === "SIGABRT" ? "The program aborted itself (an assertion, a fatal runtime error): read the end of its log." : "Find what sent the signal; the agent sends only SIGTERM and SIGKILL.",
    };
  }
  return {
    cause: code === 1 ? "app-error" : "app-exit-code",
    endedBy: "itself",
    title: code === 1 ? `Application error: the program exited with code 1${ran}, on its own` : `The program exited with its own code ${code}${ran}, on its own`,
    change: "Read the previous attempt's last lines: the program says why (a missing environment variable, a bad config, a dependency it could not reach). Probe settings will not change this.",
  };
}
