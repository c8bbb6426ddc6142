/**
 * The API's credentials, kept next to the database in `<db>.api/`: a self-signed CA, a serving
 * certificate it signs (SAN 127.0.0.1, ::1, localhost and the listen host), and a bearer token.
 * Created once, on the first start, as a whole (written in a temporary directory renamed into
 * place, so a second process racing the first reuses the winner's files), and reused afterwards so
 * a kubeconfig printed once keeps working. `run` records there the address it listens on, for
 * `minikubelet kubeconfig`.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import forge from "node-forge";
import { makePrivateDir } from "../../host/private-files.ts";

export interface ApiCredentials {
  dir: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  token: string;
}

const FILES = { ca: "ca.crt", caKey: "ca.key", cert: "server.crt", key: "server.key", token: "token", address: "address" } as const;
const VALIDITY_YEARS = 10;
const LOOPBACK_NAMES = ["127.0.0.1", "::1", "localhost"];

/** The directory of the API's files for the database at `dbPath` (named after it, like its runtime root). */
export function apiDirOf(dbPath: string): string {
  return `${dbPath}.api`;
}

/**
 * Loads the credentials, creating them on first use. `host` is the listen host: a serving
 * certificate that does not name it (for a wildcard, each of this host's addresses) is reissued by
 * the same CA; the CA and token stay.
 */
export function ensureCredentials(dbPath: string, host = "127.0.0.1"): ApiCredentials {
  const dir = apiDirOf(dbPath);
  if (!existsSync(join(dir, FILES.token))) createAll(dir, host);
  const credentials = loadCredentials(dir);
  const named = certificateNames(credentials.certPem);
  if (!servingNames(host).every((name) => named.includes(normalizeHost(name)))) return reissueServing(dir, credentials, host);
  return credentials;
}

/** The credentials as stored; throws ENOENT when `run` or `serve` never started on this database. */
export function loadCredentials(dir: string): ApiCredentials {
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return { dir, caPem: read(FILES.ca), certPem: read(FILES.cert), keyPem: read(FILES.key), token: read(FILES.token).trim() };
}

/** Records the `https://host:port` the API listens on, for `minikubelet kubeconfig`. */
export function recordServerAddress(dbPath: string, server: string): void {
  writeAtomically(join(apiDirOf(dbPath), FILES.address), `${server}\n`, 0o644);
}

export function readServerAddress(dbPath: string): string | undefined {
  try {
    return readFileSync(join(apiDirOf(dbPath), FILES.address), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

function createAll(dir: string, host: string): void {
  makePrivateDir(dirname(dir));
  // mkdtemp makes the directory 0700, so the keys and token are never reachable through it.
  const staging = mkdtempSync(`${dir}.new-`);
  try {
    const ca = issueCa();
    const serving = issueServing(ca, servingNames(host));
    writeFileSync(join(staging, FILES.caKey), forge.pki.privateKeyToPem(ca.key), { mode: 0o600 });
    writeFileSync(join(staging, FILES.ca), forge.pki.certificateToPem(ca.cert), { mode: 0o644 });
    writeFileSync(join(staging, FILES.key), serving.keyPem, { mode: 0o600 });
    writeFileSync(join(staging, FILES.cert), serving.certPem, { mode: 0o644 });
    writeFileSync(join(staging, FILES.token), `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600 });
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    // Another process created the directory first: its credentials are the ones to use.
    if (existsSync(join(dir, FILES.token))) return;
    throw error;
  }
}

function reissueServing(dir: string, credentials: ApiCredentials, host: string): ApiCredentials {
  const ca = { cert: forge.pki.certificateFromPem(credentials.caPem), key: forge.pki.privateKeyFromPem(readFileSync(join(dir, FILES.caKey), "utf8")) };
  const names = [...new Set([...certificateNames(credentials.certPem), ...servingNames(host)])];
  const serving = issueServing(ca, names);
  writeAtomically(join(dir, FILES.key), serving.keyPem, 0o600);
  writeAtomically(join(dir, FILES.cert), serving.certPem, 0o644);
  return { ...credentials, certPem: serving.certPem, keyPem: serving.keyPem };
}

interface Issuer {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
}

function issueCa(): Issuer {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = baseCertificate(keys.publicKey, [{ name: "commonName", value: "minikubelet-ca" }]);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert, key: keys.privateKey };
}

function issueServing(ca: Issuer, names: string[]): { certPem: string; keyPem: string } {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = baseCertificate(keys.publicKey, [{ name: "commonName", value: "minikubelet-apiserver" }]);
  cert.setIssuer(ca.cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: names.map((name) => (isIP(name) ? { type: 7, ip: name } : { type: 2, value: name })) },
  ]);
  cert.sign(ca.key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

function baseCertificate(publicKey: forge.pki.PublicKey, subject: forge.pki.CertificateField[]): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  // Positive (leading byte below 0x80) and unique per issue, as RFC 5280 asks.
  cert.serialNumber = `01${randomBytes(15).toString("hex")}`;
  const now = new Date();
  cert.validity.notBefore = new Date(now.getTime() - 60_000);
  cert.validity.notAfter = new Date(now.getTime());
  cert.validity.notAfter.setFullYear(now.getFullYear() + VALIDITY_YEARS);
  cert.setSubject(subject);
  return cert;
}

/** The names a client may dial: loopback, and the listen host, or for a wildcard every address of this host. */
function servingNames(host: string): string[] {
  const listen = normalizeHost(host);
  if (listen !== "0.0.0.0" && listen !== "::") return [...new Set([...LOOPBACK_NAMES, listen])];
  const addresses = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((entry) => entry.address.replace(/%.*$/, "")));
  return [...new Set([...LOOPBACK_NAMES, ...addresses])];
}

/** The DNS names and IPs a certificate's SAN lists. */
function certificateNames(certPem: string): string[] {
  const san = forge.pki.certificateFromPem(certPem).getExtension("subjectAltName") as { altNames?: { type: number; value?: string; ip?: string }[] } | null;
  return (san?.altNames ?? []).map((name) => normalizeHost(name.ip ?? name.value ?? ""));
}

function normalizeHost(host: string): string {
  const bare = host.replace(/^\[|\]$/g, "");
  if (bare === "0.0.0.0" || bare === "::") return bare;
  return isIP(bare) === 6 ? expandV6(bare) : bare.toLowerCase();
}

/** forge reports IPv6 SANs in full form (`0:0:0:0:0:0:0:1`); compare them that way. */
function expandV6(address: string): string {
  const [head, tail = ""] = address.split("::");
  const left = head ? head.split(":") : [];
  const right = address.includes("::") ? (tail ? tail.split(":") : []) : [];
  const fill = address.includes("::") ? Array(8 - left.length - right.length).fill("0") : [];
  return [...left, ...fill, ...right].map((part) => part.replace(/^0+(?=.)/, "").toLowerCase()).join(":");
}

function writeAtomically(path: string, content: string, mode: number): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, content, { mode });
  renameSync(temporary, path);
}
