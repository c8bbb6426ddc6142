/**
 * The hostname a pod's containers see on docker, as the kubelet's GeneratePodHostNameAndDomain
 * gives it to the sandbox: spec.hostnameOverride when set, else spec.hostname, else the pod name.
 */
import { expect, test } from "bun:test";
import { desired } from "../pod-builder.ts";
import { waitForLog } from "../runtime-contract.ts";
import { bbContainer, describeDocker, dockerLoopFixture, testPod } from "./helpers.ts";

const fx = dockerLoopFixture("mk-hostname-docker-");

describeDocker("a pod's hostname on docker", () => {
  async function hostnames(name: string, spec: Record<string, unknown>): Promise<string> {
    const web = testPod(name, [bbContainer("main", "echo \"$(hostname);$(hostname -f);\"")], { manifest: { spec } });
    fx.created.push(web);
    await fx.h.kubelet.sync(desired(web));
    await fx.h.count((e) => e.reason === "Started", 1, 20_000);
    const id = fx.h.kubelet.pods.get(web.key)!.app[0]!.containerId!;
    return (await waitForLog(fx.runtime, id, ";", 10_000)).trim();
  }

  test("spec.hostnameOverride wins over spec.hostname, and hostname -f says the same", async () => {
    expect(await hostnames("both", { hostname: "custom-host", hostnameOverride: "override.example.host" })).toBe("override.example.host;override.example.host;");
  });

  test("spec.hostname replaces the pod name", async () => {
    expect(await hostnames("named", { hostname: "custom-host" })).toStartWith("custom-host;");
  });

  test("without either, the pod name", async () => {
    expect(await hostnames("plain", {})).toStartWith("plain;");
  });
});
