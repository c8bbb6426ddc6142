/**
 * What a port-forward over the WebSocket channel protocol (the client libraries': python's
 * kubernetes.stream.portforward, client-node's PortForward) asks for before its upgrade, checked as
 * a cluster checks it. The API server converts the `ports` query into PodPortForwardOptions
 * (apimachinery's Convert_Slice_string_To_Slice_int32: each value a comma list of 16-bit numbers)
 * and hands them to the kubelet joined in one `port` value; the kubelet's portforward/websocket.go
 * (NewV4Options) requires one and refuses 0, and picks the subprotocol. Pure.
 */
import { goQuote } from "../../prober/probe-result.ts";
import { ApiError } from "../http/status.ts";
import type { ChannelCodec } from "../streaming/ws-channels.ts";

/** The kubelet's channel protocols for port-forward: v4's, binary and base64 (not the unversioned ones exec's v1 had). */
export const PORT_FORWARD_CHANNEL_PROTOCOLS = ["v4.channel.k8s.io", "v4.base64.channel.k8s.io"] as const;

/** "" is a client that offers no subprotocol: the kubelet serves it binary, and answers none. */
export type PortForwardChannelProtocol = "" | (typeof PORT_FORWARD_CHANNEL_PROTOCOLS)[number];

/**
 * Ports one WebSocket forwards at most. Each takes two channels (data 2i, error 2i+1) and a channel
 * is one byte: the kubelet's `byte(i)` wraps past 128 ports, mixing a later port's bytes into an
 * earlier one's. Below the SPDY session's connection bound (MAX_CONNECTIONS_PER_SESSION) too.
 */
export const MAX_WEBSOCKET_PORTS = 128;

/**
 * The subprotocol as the kubelet's handshake picks it: the first the client offers that it serves
 * (the client's order, not ours: client-node offers v5 first, which port-forward does not speak),
 * "" when it offers none at all; undefined when it offers only others.
 */
export function choosePortForwardChannelProtocol(offer: string | null): PortForwardChannelProtocol | undefined {
  const offered = (offer ?? "")
    .split(",")
    .map((protocol) => protocol.trim())
    .filter(Boolean);
  if (offered.length === 0) return "";
  return offered.find((protocol): protocol is PortForwardChannelProtocol => (PORT_FORWARD_CHANNEL_PROTOCOLS as readonly string[]).includes(protocol));
}

export function channelCodecOf(protocol: PortForwardChannelProtocol): ChannelCodec {
  return protocol === "v4.base64.channel.k8s.io" ? "base64" : "binary";
}

/**
 * The `ports` query as the API server converts it, for every port-forward request (a bad value is
 * refused before anything else is looked at): each value a comma list, each item Go's
 * `strconv.ParseUint(item, 10, 16)`. 0 passes here; the kubelet refuses it (portsToForward).
 */
export function parsePortsQuery(query: URLSearchParams): number[] {
  const ports: number[] = [];
  for (const value of query.getAll("ports")) {
    for (const item of value.split(",")) {
      const problem = !/^\d+$/.test(item) ? "invalid syntax" : Number(item) > 0xffff ? "value out of range" : undefined;
      if (problem) throw ApiError.badRequest(`cannot convert to []int32: strconv.ParseUint: parsing ${goQuote(item)}: ${problem}`);
      ports.push(Number(item));
    }
  }
  return ports;
}

/**
 * The ports a WebSocket forwards, as the kubelet's NewV4Options takes them from the API server's
 * one `port` value (so its messages name `port`, and quote every port, as a cluster's do), and
 * within MAX_WEBSOCKET_PORTS.
 */
export function portsToForward(ports: readonly number[]): number[] {
  if (ports.length === 0) throw ApiError.badRequest(`query parameter "port" is required`);
  if (ports.includes(0)) throw ApiError.badRequest(`port ${goQuote(ports.join(","))} must be > 0`);
  if (ports.length > MAX_WEBSOCKET_PORTS) {
    throw ApiError.badRequest(`too many ports to forward on one WebSocket: ${ports.length} (limit ${MAX_WEBSOCKET_PORTS}: each port takes two of its 256 channel numbers)`);
  }
  return [...ports];
}
