/**
 * `spec.hostAliases`, as the API server's ValidateHostAliases checks them: each `ip` an IP address
 * in strict form (StrictIPCIDRValidation is on in 1.37: no leading zeros, no IPv4-mapped IPv6),
 * each hostname a DNS-1123 subdomain. The kubelet writes them to the managed /etc/hosts as given.
 */
import { isIP } from "node:net";
import type { Fields } from "../fields.ts";
import { checkDns1123Subdomain } from "../names.ts";

export function checkHostAliases(spec: Fields): void {
  for (const alias of spec.objectList("hostAliases")) {
    const problem = ipProblem(alias.string("ip") ?? "");
    if (problem) alias.fail("ip", problem);
    alias.stringList("hostnames").forEach((hostname, index) => {
      const invalid = checkDns1123Subdomain(hostname);
      if (invalid) alias.issues.add([...alias.at("hostnames"), index], invalid);
    });
  }
}

function ipProblem(ip: string): string | undefined {
  const shown = JSON.stringify(ip);
  if (isSloppyIPv4(ip) && isIP(ip) === 0) return `Invalid value: ${shown}: must not have leading 0s`;
  if (isIP(ip) === 0) return `Invalid value: ${shown}: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`;
  if (/^(0{0,4}:){0,5}:?ffff:/i.test(ip) && isIP(ip) === 6) return `Invalid value: ${shown}: must not be an IPv4-mapped IPv6 address`;
  return undefined;
}

/** Four decimal octets up to 255, leading zeros allowed: what Go's sloppy parse still reads. */
function isSloppyIPv4(ip: string): boolean {
  const octets = ip.split(".");
  return octets.length === 4 && octets.every((octet) => /^\d{1,3}$/.test(octet) && Number(octet) <= 255);
}
