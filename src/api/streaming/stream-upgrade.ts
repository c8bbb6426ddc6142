/**
 * The upgrade of `pods/NAME/exec` and `pods/NAME/attach` (kubectl 1.30+ over WebSocket, a GET; 1.27
 * to 1.29 over SPDY/3.1, a POST, which 1.29 and 1.30+ also fall back to when a WebSocket upgrade is
 * refused): the protocol chosen from the client's offer, a slot among the API's open sessions of
 * its kind (streaming.ts; `limits.maxExecSessions` each for exec and attach), and the session handed
 * to the connection.
 */
import type { Clock } from "../../clock.ts";
import type { ApiContext } from "../http/context.ts";
import { chooseExecProtocol, EXEC_PROTOCOLS, type ExecProtocol } from "./exec-protocol.ts";
import type { ApiRequest, SpdySession, WebSocketSession } from "../http/http.ts";
import { SPDY_STREAM_PROTOCOL } from "./stream-spdy.ts";
import { ApiError } from "../http/status.ts";
import { offersProtocol, takeSessionSlot, upgradeSpdy } from "./streaming.ts";

/** The session of each framing, for a run whose end calls `onEnd` (which frees its slot). */
export interface SessionFactory {
  webSocket(protocol: ExecProtocol, onEnd: () => void, clock: Clock): WebSocketSession;
  spdy(onEnd: () => void, clock: Clock): SpdySession;
}

/** Upgrades the request to the framing it asks for; a request that cannot be is a 400 (or 429) Status. */
export function upgradeStream(request: ApiRequest, api: ApiContext, kind: "exec" | "attach", sessions: SessionFactory): Response {
  const upgrade = (request.headers.get("upgrade") ?? "").toLowerCase();
  if (upgrade !== "websocket" && upgrade !== "spdy/3.1") {
    throw ApiError.badRequest(`${kind} needs a connection upgrade: to websocket (${EXEC_PROTOCOLS.join(", ")}) or SPDY/3.1 (${SPDY_STREAM_PROTOCOL})`);
  }
  const spdy = upgrade === "spdy/3.1";
  const offer = request.headers.get(spdy ? "x-stream-protocol-version" : "sec-websocket-protocol");
  const webSocketProtocol = spdy ? undefined : chooseExecProtocol(offer);
  if (spdy ? !offersProtocol(offer, SPDY_STREAM_PROTOCOL) : !webSocketProtocol) {
    const supported = spdy ? SPDY_STREAM_PROTOCOL : EXEC_PROTOCOLS.join(", ");
    throw ApiError.badRequest(`requested protocol(s) are not supported: ${offer ?? "none"}; supports ${supported}`);
  }
  // Each kind has its own slots; attach is bounded as exec is.
  const release = takeSessionSlot(api, kind, api.limits.maxExecSessions);
  if (release instanceof Response) return release;
  const refused = webSocketProtocol ? request.upgrade(sessions.webSocket(webSocketProtocol, release, api.clock)) : upgradeSpdy(request, sessions.spdy(release, api.clock));
  if (refused) {
    release();
    return refused;
  }
  return new Response(null, { status: 101 });
}
