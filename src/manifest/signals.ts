/**
 * The signals a container may be stopped with (KEP-4960, `lifecycle.stopSignal`), as the API server
 * lists them per `spec.os.name`, with their Linux numbers: what a runtime sends and what an exit
 * code of 128 + n names. The real-time forms count from SIGRTMIN (34) and back from SIGRTMAX (64),
 * as the C library numbers them.
 */

const SIGRTMIN = 34;
const SIGRTMAX = 64;

const NAMED_LINUX_SIGNALS: Readonly<Record<string, number>> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGIOT: 6, SIGBUS: 7, SIGFPE: 8,
  SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSTKFLT: 16,
  SIGCHLD: 17, SIGCLD: 17, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22, SIGURG: 23,
  SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28, SIGIO: 29, SIGPOLL: 29, SIGPWR: 30,
  SIGSYS: 31,
};

/** Every stop signal a linux pod may name, with its number: SIGRTMIN+1..15 and SIGRTMAX-14..1 included. */
export const LINUX_STOP_SIGNALS: ReadonlyMap<string, number> = new Map([
  ...Object.entries(NAMED_LINUX_SIGNALS),
  ["SIGRTMIN", SIGRTMIN],
  ...Array.from({ length: 15 }, (_, i) => [`SIGRTMIN+${i + 1}`, SIGRTMIN + i + 1] as const),
  ...Array.from({ length: 14 }, (_, i) => [`SIGRTMAX-${i + 1}`, SIGRTMAX - i - 1] as const),
  ["SIGRTMAX", SIGRTMAX],
]);

/** A windows pod may only be stopped with these (hcsshim knows no others). */
export const WINDOWS_STOP_SIGNALS: readonly string[] = ["SIGKILL", "SIGTERM"];

/** A signal by its name, e.g. "SIGUSR1" or "SIGRTMIN+3": what the runtimes are told to send. */
export type SignalName = string;

/** The signal a container is stopped with when neither its spec nor its image names one. */
export const DEFAULT_STOP_SIGNAL: SignalName = "SIGTERM";

/** The Linux number of a signal name (SIGUSR1 -> 10), or undefined for a name not in the table. */
export function signalNumber(name: SignalName): number | undefined {
  return LINUX_STOP_SIGNALS.get(name);
}

/**
 * The canonical name of a signal as an engine reports it ("SIGUSR1", "USR1", "10", "RTMIN+3"), or
 * undefined when it names none: the image's STOPSIGNAL comes in any of these spellings.
 */
export function canonicalSignalName(value: string): SignalName | undefined {
  const trimmed = value.trim().toUpperCase();
  if (trimmed === "") return undefined;
  if (/^\d+$/.test(trimmed)) {
    const number = Number(trimmed);
    for (const [name, n] of LINUX_STOP_SIGNALS) if (n === number && !ALIASES.has(name)) return name;
    return undefined;
  }
  const name = trimmed.startsWith("SIG") ? trimmed : `SIG${trimmed}`;
  return LINUX_STOP_SIGNALS.has(name) ? name : undefined;
}

/** Second names of a number, never chosen when a number is read back as a name. */
const ALIASES: ReadonlySet<string> = new Set(["SIGIOT", "SIGCLD", "SIGPOLL"]);
