/**
 * kubectl on a pseudo-terminal, as a person runs `kubectl run -it` or `kubectl attach -it` in a
 * shell: it waits for the shell's prompt and a quiet screen, types, and returns what showed and
 * kubectl's exit code (pressing enter first, as kubectl's hint says, when no prompt shows). Cursor queries (busybox's line editor asks where the cursor is) are answered
 * as a terminal answers them. Bounded whatever happens: a kubectl that never shows the prompt or
 * never exits is killed and its terminal closed, so a test fails with the screen it saw.
 */
import type { KubectlSession } from "./harness.ts";

/** A shell prompt at the end of the screen, escape sequences aside. */
const PROMPT = /[#$] $/;
const ESCAPES = /\x1b\[[0-9;?]*[A-Za-z]/g;
const CURSOR_QUERY = "\x1b[6n";
const PRESS_ENTER = "If you don't see a command prompt, try pressing enter.";

export interface TerminalRun {
  screen: string;
  status: number;
}

export async function onTerminal(session: KubectlSession, kubectl: string, args: string[], typed: string, boundMs: number): Promise<TerminalRun> {
  let screen = "";
  let lastOutput = Date.now();
  const child = Bun.spawn([kubectl, "--kubeconfig", session.kubeconfig, "--cache-dir", session.cacheDir, ...args], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: session.dir, TERM: "xterm" },
    terminal: {
      cols: 100,
      rows: 30,
      data: (terminal, data) => {
        const text = new TextDecoder().decode(data);
        screen += text;
        lastOutput = Date.now();
        if (text.includes(CURSOR_QUERY)) terminal.write("\x1b[1;5R");
      },
    },
  });
  const deadline = Date.now() + boundMs;
  const giveUp = () => {
    child.kill("SIGKILL");
    child.terminal?.close();
  };
  let pressedEnter = false;
  while (!(PROMPT.test(screen.replace(ESCAPES, "")) && Date.now() - lastOutput > 300) && child.exitCode === null && Date.now() < deadline) {
    // A shell that printed its prompt before the attach (dash redraws nothing on a resize) shows
    // none: as kubectl's hint says, a person presses enter.
    if (!pressedEnter && screen.includes(PRESS_ENTER) && Date.now() - lastOutput > 1000) {
      pressedEnter = true;
      child.terminal?.write("\r");
    }
    await Bun.sleep(50);
  }
  child.terminal?.write(typed);
  const killer = setTimeout(giveUp, Math.max(0, deadline - Date.now()) + 5_000);
  const status = await Promise.race([child.exited, Bun.sleep(boundMs + 10_000).then(() => -1)]);
  clearTimeout(killer);
  child.terminal?.close();
  return { screen, status };
}
