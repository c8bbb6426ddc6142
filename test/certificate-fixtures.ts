/** Certificates for the listener's client-certificate tests, made with openssl in a test's directory. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CertificateUser } from "../src/api/http/certificate-user.ts";
import type { RequestGate } from "../src/api/http/server.ts";

function openssl(dir: string, ...args: string[]): void {
  const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${result.stderr}`);
}

/**
 * In `dir`: a CA named `ca` (ca.crt, ca.key) and a client certificate it signs for `subject`
 * (`client`.crt, `client`.key), both EC keys (quick to make).
 */
export function issueClientCertificate(dir: string, ca: string, client: string, subject: string): void {
  openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${ca}.key`, "-out", `${ca}.crt`, "-subj", `/CN=${ca}`, "-days", "1");
  openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", `${client}.key`, "-out", `${client}.csr`, "-subj", subject);
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  openssl(dir, "x509", "-req", "-in", `${client}.csr`, "-CA", `${ca}.crt`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-out", `${client}.crt`, "-days", "1", "-extfile", "client.ext");
}

/** A gate that records the certificate user of each request in `seen`, and lets in only requests that have one. */
export function recordingGate(seen: (CertificateUser | undefined)[]): RequestGate {
  return async (_request, certificate) => {
    seen.push(certificate);
    return certificate ? undefined : new Response("Unauthorized", { status: 401 });
  };
}
