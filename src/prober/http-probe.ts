/**
 * httpGet probes, like the kubelet's pkg/probe/http: a GET from the node to the pod, 200-399 is
 * success. Redirects to the same host are followed (at most 10); a redirect to another host is not
 * followed and counts as success with a `Probe terminated redirects` warning. HTTPS skips
 * certificate verification. At most 10 KiB of the body is read. Messages use Go's wording.
 */
import http from "node:http";
import https from "node:https";
import type { Clock } from "../clock.ts";
import type { HttpGetAction } from "../manifest/types.ts";
import { KUBE_MINOR_VERSION } from "../version.ts";
import { dialErrorMessage, goQuote, isDialError, joinHostPort, type ProbeResult } from "./probe-result.ts";

/** The kubelet stops reading a probe's response body here (pkg/probe/http maxRespBodyLength). */
export const MAX_BODY_BYTES = 10 * 1024;
/** Go's http.Client default redirect limit, which the kubelet's redirect checker keeps. */
const MAX_REDIRECTS = 10;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The URL the kubelet builds: lower-cased scheme, host (else the pod IP), port and path. */
export function probeUrl(action: HttpGetAction, podIP: string): URL {
  const scheme = action.scheme.toLowerCase();
  const host = action.host || podIP;
  const path = action.path === "" || action.path.startsWith("/") ? action.path : `/${action.path}`;
  return new URL(`${scheme}://${joinHostPort(host, action.port)}${path}`);
}

/** Go prints a URL with no path as `http://h:p`, where WHATWG adds a trailing slash. */
function goUrlString(url: URL, pathWasEmpty: boolean): string {
  return pathWasEmpty && url.pathname === "/" && !url.search ? url.origin : url.href;
}

/**
 * The request headers: the probe's httpHeaders (repeated names send every value), then
 * `User-Agent: kube-probe/<version>` and `Accept: *\/*` unless the probe set them; an empty Accept
 * removes the header. A Host header becomes the request's Host.
 */
export function probeHeaders(action: HttpGetAction): Record<string, string | string[]> {
  const headers: Record<string, string[]> = {};
  const names = new Map<string, string>();
  for (const { name, value } of action.httpHeaders) {
    const key = names.get(name.toLowerCase()) ?? name;
    names.set(name.toLowerCase(), key);
    (headers[key] ??= []).push(value);
  }
  const has = (name: string) => names.has(name.toLowerCase());
  if (!has("user-agent")) headers["User-Agent"] = [`kube-probe/${KUBE_MINOR_VERSION}`];
  if (!has("accept")) headers["Accept"] = ["*/*"];
  else {
    const key = names.get("accept") ?? "Accept";
    if ((headers[key] ?? []).every((value) => value === "")) delete headers[key];
  }
  if (has("host")) {
    const key = names.get("host") ?? "Host";
    headers[key] = [(headers[key] ?? [""])[0] ?? ""];
  }
  // The kubelet's transport disables keep-alives: one connection per probe.
  headers["Connection"] = ["close"];
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.length === 1 ? (v[0] ?? "") : v]));
}

interface Hop {
  status: number;
  location?: string;
  body: string;
}

/**
 * Runs one httpGet probe against `podIP` (or the action's host). Never rejects. The whole probe,
 * redirects and body included, must finish within `timeoutMs`, armed on `clock`.
 */
export function httpProbe(clock: Clock, action: HttpGetAction, podIP: string, timeoutMs: number): Promise<ProbeResult> {
  const firstUrl = probeUrl(action, podIP);
  const headers = probeHeaders(action);
  return new Promise((resolve) => {
    let settled = false;
    let currentUrl = goUrlString(firstUrl, action.path === "");
    let readingBody = false;
    let abortCurrent: (() => void) | undefined;
    const finish = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      abortCurrent?.();
      resolve(result);
    };
    const cancelTimer = clock.setTimeout(() => {
      finish(
        readingBody
          ? // The kubelet treats this as an errored run and retries it; we fail it instead, so
            // an endpoint that stalls mid-body costs one timeout like any other hung endpoint.
            { ok: false, message: "context deadline exceeded (Client.Timeout or context cancellation while reading body)" }
          : {
              ok: false,
              message: `Get ${goQuote(currentUrl)}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
            },
      );
    }, timeoutMs);

    const sendOnce = (url: URL): Promise<Hop> =>
      new Promise((resolveHop, rejectHop) => {
        const transport = url.protocol === "https:" ? https : http;
        const request = transport.request(url, {
          method: "GET",
          headers,
          agent: false,
          // The kubelet's prober uses InsecureSkipVerify: pods serve self-signed certificates.
          rejectUnauthorized: false,
        });
        abortCurrent = () => request.destroy();
        request.once("error", rejectHop);
        request.once("response", (response) => {
          readingBody = true;
          const chunks: Buffer[] = [];
          let size = 0;
          const done = () => {
            readingBody = false;
            const body = Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8");
            resolveHop({ status: response.statusCode ?? 0, location: response.headers.location, body });
          };
          abortCurrent = () => response.destroy();
          response.on("data", (chunk: Buffer) => {
            chunks.push(chunk);
            size += chunk.length;
            // Enough to judge: the status decides, the body is only reported.
            if (size >= MAX_BODY_BYTES) {
              response.destroy();
              done();
            }
          });
          response.once("end", done);
          response.once("error", (error) => (size >= MAX_BODY_BYTES ? done() : rejectHop(error)));
        });
        request.end();
      });

    const run = async (): Promise<ProbeResult> => {
      let url = firstUrl;
      for (let redirects = 0; ; redirects++) {
        let hop: Hop;
        try {
          hop = await sendOnce(url);
        } catch (error) {
          return { ok: false, message: `Get ${goQuote(currentUrl)}: ${requestErrorMessage(url, error)}` };
        }
        if (REDIRECT_STATUSES.has(hop.status) && hop.location !== undefined) {
          const next = new URL(hop.location, url);
          if (next.hostname === firstUrl.hostname) {
            if (redirects >= MAX_REDIRECTS) {
              return { ok: false, message: `Get ${goQuote(next.href)}: stopped after ${MAX_REDIRECTS} redirects` };
            }
            url = next;
            currentUrl = next.href;
            continue;
          }
        }
        return judge(hop);
      }
    };
    run().then(finish, (error: unknown) => finish({ ok: false, errored: true, message: String(error) }));
  });
}

function judge(hop: Hop): ProbeResult {
  if (hop.status >= 200 && hop.status < 300) return { ok: true, message: hop.body };
  if (hop.status >= 300 && hop.status < 400) {
    return { ok: true, warning: true, message: `Probe terminated redirects, Response body: ${hop.body}` };
  }
  // The body stays out of the message, as in the kubelet (kubernetes#99425).
  return { ok: false, message: `HTTP probe failed with statuscode: ${hop.status}` };
}

/** A transport error in Go's words (after `Get "url": `). */
function requestErrorMessage(url: URL, error: unknown): string {
  if (isDialError(error)) {
    const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    return dialErrorMessage(joinHostPort(host, port), error);
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  // The server closed the connection without answering: Go's transport reports io.EOF.
  if (code === "ECONNRESET" || code === "EPIPE") return "EOF";
  return error instanceof Error ? error.message : String(error);
}
