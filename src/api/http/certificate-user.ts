/**
 * Who a TLS client is by its certificate, as the kubelet's x509 authenticator reads one: the user
 * is the CommonName and the groups are the Organizations of a certificate the client CA verified.
 */
import type { TLSSocket } from "node:tls";

/** Who a verified client certificate says its holder is (the kubelet's x509 CommonNameUserConversion). */
export interface CertificateUser {
  name: string;
  groups: string[];
  /** `X509SHA256=` and the certificate's SHA-256, the authenticator's credential id (user.CredentialIDKey). */
  credentialId: string;
}

/**
 * The verified client certificate's user (CN) and groups (O), or undefined for none, one the CA did
 * not sign, or one not for client authentication (OpenSSL's verification checks that purpose).
 */
export function certificateUser(socket: TLSSocket): CertificateUser | undefined {
  if (!socket.authorized) return undefined;
  const certificate = socket.getPeerCertificate();
  const subject = certificate?.subject as Record<string, string | string[] | undefined> | undefined;
  const name = subject?.CN;
  // The x509 authenticator authenticates no one from a certificate without a CommonName.
  if (typeof name !== "string" || name === "") return undefined;
  const organizations = subject?.O;
  const credentialId = `X509SHA256=${(certificate.fingerprint256 ?? "").replaceAll(":", "").toLowerCase()}`;
  return { name, groups: organizations === undefined ? [] : Array.isArray(organizations) ? organizations : [organizations], credentialId };
}
