/**
 * The C library through bun:ffi, for the few calls Bun has no binding for (flock, setrlimit): glibc's
 * name first, then musl's (the -musl release targets have no libc.so.6; musl's libc is also its
 * dynamic loader).
 */
import { dlopen, type FFIFunction } from "bun:ffi";

const LIBC_NAMES = ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "libc.so"];

/** A libc that could be loaded under none of its names; `failures` says why for each. */
export class LibcUnavailableError extends Error {
  constructor(readonly failures: string[]) {
    super(`the C library could not be loaded (${failures.join("; ")})`);
  }
}

/** `symbols` from the first libc that loads; throws LibcUnavailableError when none does. */
export function openLibc<T extends Record<string, FFIFunction>>(symbols: T): ReturnType<typeof dlopen<T>>["symbols"] {
  const failures: string[] = [];
  for (const name of LIBC_NAMES) {
    try {
      return dlopen(name, symbols).symbols;
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  throw new LibcUnavailableError(failures);
}
