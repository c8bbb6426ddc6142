/**
 * Interactive exec for the docker runtime (`kubectl exec`): the exec is created through dockerode,
 * then started on a connection of our own to the engine, hijacked by hand (docker-hijack.ts says
 * why), and its exit code read once its stream ends.
 */
import type Dockerode from "dockerode";
import type { Clock } from "../../clock.ts";
import { killExec } from "./docker-exec.ts";
import { HijackedStream, plainEndpoint } from "./docker-hijack.ts";
import type { ExecSession, ExecStreamRequest, TerminalSize } from "../runtime.ts";

/** How often, and how far apart, the engine is asked for an exit code it has not recorded yet. */
const EXIT_CODE_TRIES = 10;
const EXIT_CODE_RETRY_MS = 50;

export async function startDockerExec(docker: Dockerode, containerId: string, request: ExecStreamRequest, clock: Clock): Promise<ExecSession> {
  if (request.command.length === 0) throw new Error("exec: command is empty");
  const endpoint = plainEndpoint(docker, "exec");
  const exec = await docker.getContainer(containerId).exec({
    Cmd: request.command,
    AttachStdin: request.stdin,
    AttachStdout: true,
    AttachStderr: true,
    Tty: request.tty,
  });
  const stream = await HijackedStream.open(endpoint, `/exec/${exec.id}/start`, JSON.stringify({ Detach: false, Tty: request.tty }), request);
  const resize = async (size: TerminalSize): Promise<void> => {
    if (request.tty && size.width > 0 && size.height > 0) await exec.resize({ h: size.height, w: size.width }).catch(() => undefined);
  };
  // Engine API 1.41 takes no size at start: the command may run a moment on a 0x0 terminal.
  if (request.size) await resize(request.size);
  const kill = () => void killExec(exec).finally(() => stream.close());
  if (request.signal?.aborted) kill();
  request.signal?.addEventListener("abort", kill, { once: true });
  const exited = stream.closed.then(async () => {
    request.signal?.removeEventListener("abort", kill);
    // The stream can end a moment before the engine records the exit code.
    for (let attempt = 1; ; attempt++) {
      const info = await exec.inspect().catch(() => undefined);
      if (info && !info.Running && typeof info.ExitCode === "number") return info.ExitCode;
      if (!info || attempt >= EXIT_CODE_TRIES) return 137;
      await new Promise<void>((resolve) => clock.setTimeout(resolve, EXIT_CODE_RETRY_MS));
    }
  });
  return {
    write: (data) => stream.write(data),
    closeStdin: () => stream.closeWrite(),
    resize,
    exited,
  };
}
