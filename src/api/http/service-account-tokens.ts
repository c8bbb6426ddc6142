/**
 * The agent's ServiceAccount tokens, as the API server's TokenRequest issues them: JWTs signed
 * with the agent's own key (ES256, `service-account.key` beside the API's other credentials,
 * made on first use and kept, so a token outlives a restart), naming the ServiceAccount as
 * `system:serviceaccount:NS:NAME` and, when bound, its pod, with the claims a kube-apiserver
 * writes (`kubernetes.io`: namespace, serviceaccount, pod). jose signs and verifies them.
 *
 * A token is accepted only while what it names still exists (the API checks that: tokens-gate.ts),
 * as the API server's legacy and bound token validation does.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jwtVerify, SignJWT } from "jose";
import type { Clock } from "../../clock.ts";
import { writePrivateFileAtomically } from "../../host/private-files.ts";

/** The `iss` of every token, and the audience a token without one asked for is issued to (the API's own). */
export const TOKEN_ISSUER = "https://minikubelet.local";
export const API_AUDIENCES: readonly string[] = [TOKEN_ISSUER];
const KEY_FILE = "service-account.key";
/** The API server's bounds on expirationSeconds (TokenRequest validation; the kubelet asks 3607). */
export const MIN_EXPIRATION_SECONDS = 600;
export const DEFAULT_EXPIRATION_SECONDS = 3600;

export interface TokenSubject {
  namespace: string;
  serviceAccount: { name: string; uid: string };
  /** The pod the token is bound to: it is valid only while that pod exists. */
  pod?: { name: string; uid: string };
}

export interface IssueRequest extends TokenSubject {
  /** Empty: the API's own audiences. */
  audiences: readonly string[];
  expirationSeconds: number;
}

export interface Issued {
  token: string;
  audiences: string[];
  /** epoch ms */
  expiresAt: number;
}

/** A verified token's subject and audiences. */
export interface VerifiedToken extends TokenSubject {
  audiences: string[];
}

interface KubernetesClaims {
  namespace?: string;
  serviceaccount?: { name?: string; uid?: string };
  pod?: { name?: string; uid?: string };
}

export class TokenAuthority {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  /** Loads the key in `dir` (the API's credentials directory), making it when there is none. */
  constructor(
    dir: string,
    private readonly clock: Clock,
  ) {
    const file = join(dir, KEY_FILE);
    if (!existsSync(file)) {
      const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
      writePrivateFileAtomically(file, privateKey.export({ type: "pkcs8", format: "pem" }) as string);
    }
    this.privateKey = createPrivateKey(readFileSync(file, "utf8"));
    this.publicKey = createPublicKey(this.privateKey);
  }

  async issue(request: IssueRequest): Promise<Issued> {
    const now = Math.floor(this.clock.now() / 1000);
    const audiences = request.audiences.length > 0 ? [...request.audiences] : [...API_AUDIENCES];
    const expires = now + request.expirationSeconds;
    const claims: KubernetesClaims = {
      namespace: request.namespace,
      serviceaccount: request.serviceAccount,
      ...(request.pod && { pod: request.pod }),
    };
    const token = await new SignJWT({ "kubernetes.io": claims })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(TOKEN_ISSUER)
      .setSubject(`system:serviceaccount:${request.namespace}:${request.serviceAccount.name}`)
      .setAudience(audiences)
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(expires)
      .setJti(randomUUID())
      .sign(this.privateKey);
    return { token, audiences, expiresAt: expires * 1000 };
  }

  /** The token's subject when this agent signed it, it is current and it is for `audience`; undefined otherwise. */
  async verify(token: string, audience: readonly string[] = API_AUDIENCES): Promise<VerifiedToken | undefined> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.publicKey, { issuer: TOKEN_ISSUER, audience: [...audience], algorithms: ["ES256"], currentDate: new Date(this.clock.now()) }));
    } catch {
      return undefined;
    }
    const claims = payload["kubernetes.io"] as KubernetesClaims | undefined;
    const namespace = claims?.namespace;
    const name = claims?.serviceaccount?.name;
    const uid = claims?.serviceaccount?.uid;
    if (!namespace || !name || !uid || payload.sub !== `system:serviceaccount:${namespace}:${name}`) return undefined;
    const pod = claims.pod?.name && claims.pod.uid ? { name: claims.pod.name, uid: claims.pod.uid } : undefined;
    const audiences = typeof payload.aud === "string" ? [payload.aud] : (payload.aud ?? []);
    return { namespace, serviceAccount: { name, uid }, ...(pod && { pod }), audiences };
  }
}

/** The user a ServiceAccount token authenticates as, with the groups the API server gives it. */
export function serviceAccountUser(subject: TokenSubject): { username: string; groups: string[] } {
  return {
    username: `system:serviceaccount:${subject.namespace}:${subject.serviceAccount.name}`,
    groups: ["system:serviceaccounts", `system:serviceaccounts:${subject.namespace}`, "system:authenticated"],
  };
}
