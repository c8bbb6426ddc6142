/**
 * `kubectl attach` for the docker runtime, as dockershim served it: the engine's own attach to the
 * container's main process (`POST /containers/ID/attach?stream=1`, hijacked by hand as exec is:
 * docker-hijack.ts), output from now on, stdin when asked, and the engine's resize. The engine
 * keeps the container's stdin semantics (created with OpenStdin/StdinOnce/Tty from the spec,
 * docker-container-config.ts): with StdinOnce and no terminal, the end of the client's stdin closes
 * the container's and the attach lasts until the container exits; otherwise it ends the attach.
 */
import type Dockerode from "dockerode";
import { HijackedStream, plainEndpoint } from "./docker-hijack.ts";
import type { AttachRequest, AttachSession, TerminalSize } from "../runtime.ts";

/** Attaches to container `containerId`'s main process; resolves once the engine has taken the attach. */
export async function attachDockerContainer(docker: Dockerode, containerId: string, request: AttachRequest): Promise<AttachSession> {
  const endpoint = plainEndpoint(docker, "attach");
  // logs=0: what the container writes from now on; what it wrote before is `logs`'.
  const query = new URLSearchParams({ stream: "1", logs: "0", stdin: request.stdin ? "1" : "0", stdout: "1", stderr: "1" });
  const stream = await HijackedStream.open(endpoint, `/containers/${encodeURIComponent(containerId)}/attach?${query}`, "", {
    tty: request.tty,
    stdin: request.stdin,
    output: request.output,
  });
  const container = docker.getContainer(containerId);
  const resize = async (size: TerminalSize): Promise<void> => {
    if (request.tty && size.width > 0 && size.height > 0) await container.resize({ h: size.height, w: size.width }).catch(() => undefined);
  };
  if (request.size) await resize(request.size);
  // A detach closes our side; the engine treats it as the end of this attach's stdin.
  const detach = () => stream.close();
  if (request.signal?.aborted) detach();
  request.signal?.addEventListener("abort", detach, { once: true });
  const ended = stream.closed.then(() => request.signal?.removeEventListener("abort", detach));
  return {
    write: (data) => stream.write(data),
    closeStdin: () => stream.closeWrite(),
    resize,
    ended,
  };
}
