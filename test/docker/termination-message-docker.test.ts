/**
 * Termination messages on the real engine, as the upstream "Container Runtime blackbox test on
 * terminated container" specs check them: a file of the attempt's own mounted at the
 * terminationMessagePath, writable by a non-root user, read at the exit into
 * state.terminated.message; with FallbackToLogsOnError the end of a failed container's log.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { describeDocker } from "./helpers.ts";
import { oneShotPods } from "./one-shot-pods.ts";

const { pod: terminatingPod, terminated } = oneShotPods("termination");

describeDocker("termination messages on the docker runtime", () => {
  test("a non-root user writes the message at a non-default path: state.terminated.message", async () => {
    // The container drops to nobody itself, as the upstream spec's image does (runAsUser: security-context-docker.test.ts).
    const spec = terminatingPod("custom-path", "su -s /bin/sh nobody -c '/bin/echo -n DONE > /dev/termination-custom-log'", "      terminationMessagePath: /dev/termination-custom-log");
    const state = await terminated(spec);
    expect(state.exitCode).toBe(0);
    expect(state.message).toBe("DONE");
    expect(existsSync("/dev/termination-custom-log")).toBe(false);
  });

  test("the default path as root", async () => {
    const state = await terminated(terminatingPod("default-path", "/bin/echo -n DONE > /dev/termination-log", ""));
    expect(state.message).toBe("DONE");
  });

  test("FallbackToLogsOnError: a failed container that wrote no file gets its log", async () => {
    const state = await terminated(terminatingPod("from-log", "/bin/echo -n DONE; /bin/false", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(state.exitCode).toBe(1);
    expect(state.message).toBe("DONE");
  });

  test("FallbackToLogsOnError: a container that succeeds gets no message from its log", async () => {
    const fromLogOnly = await terminated(terminatingPod("succeeds", "/bin/echo -n DONE; /bin/true", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(fromLogOnly.message).toBeUndefined();
  });

  test("FallbackToLogsOnError: a container that succeeds gets its file's message", async () => {
    const fromFile = await terminated(terminatingPod("from-file", "/bin/echo -n OK > /dev/termination-log; /bin/echo DONE; /bin/true", "      terminationMessagePolicy: FallbackToLogsOnError"));
    expect(fromFile.message).toBe("OK");
  });
});
