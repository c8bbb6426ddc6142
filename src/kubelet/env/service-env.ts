/**
 * The variables Services give a container (pkg/kubelet/envvars FromServices, and the choice of
 * services in getServiceEnvVarMap): `FOO_SERVICE_HOST`, `FOO_SERVICE_PORT` (and one per named
 * port), and the Docker-link style `FOO_PORT`, `FOO_PORT_80_TCP`, `_PROTO`, `_PORT`, `_ADDR`.
 * The master services of `default` (`kubernetes`) always; the pod's own namespace's only with
 * enableServiceLinks. A Service without a cluster IP gives none.
 */
import type { ServiceInfo } from "../objects/pod-object-source.ts";

const MASTER_SERVICES = new Set(["kubernetes"]);

export function serviceEnv(services: readonly ServiceInfo[], namespace: string, enableServiceLinks: boolean): Map<string, string> {
  const chosen = new Map<string, ServiceInfo>();
  for (const service of services) {
    if (service.clusterIP === "" || service.clusterIP === "None" || service.ports.length === 0) continue;
    if (service.namespace === "default" && MASTER_SERVICES.has(service.name)) {
      if (!chosen.has(service.name)) chosen.set(service.name, service);
    } else if (service.namespace === namespace && enableServiceLinks) {
      chosen.set(service.name, service);
    }
  }
  const env = new Map<string, string>();
  for (const service of chosen.values()) {
    const prefix = envName(service.name);
    env.set(`${prefix}_SERVICE_HOST`, service.clusterIP);
    env.set(`${prefix}_SERVICE_PORT`, String(service.ports[0]!.port));
    for (const port of service.ports) if (port.name) env.set(`${prefix}_SERVICE_PORT_${envName(port.name)}`, String(port.port));
    service.ports.forEach((port, index) => {
      const protocol = (port.protocol || "TCP").toLowerCase();
      const hostPort = service.clusterIP.includes(":") ? `[${service.clusterIP}]:${port.port}` : `${service.clusterIP}:${port.port}`;
      if (index === 0) env.set(`${prefix}_PORT`, `${protocol}://${hostPort}`);
      const portPrefix = `${prefix}_PORT_${port.port}_${protocol.toUpperCase()}`;
      env.set(portPrefix, `${protocol}://${hostPort}`);
      env.set(`${portPrefix}_PROTO`, protocol);
      env.set(`${portPrefix}_PORT`, String(port.port));
      env.set(`${portPrefix}_ADDR`, service.clusterIP);
    });
  }
  return env;
}

function envName(name: string): string {
  return name.replaceAll("-", "_").toUpperCase();
}
