/**
 * `kubectl debug POD` (issue 22): kubectl 1.27 and 1.33 read the pod's spec.securityContext, which
 * the API server always serves (`{}` by SetDefaults_PodSpec), and a missing one crashed them with a
 * nil-pointer panic before any request for the debug container. With the API's defaults stored,
 * kubectl gets past it to the ephemeral-containers call, whose answer is issue 23's.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadManifest } from "../../src/manifest/source.ts";
import { desired } from "../pod-builder.ts";
import { tempDir } from "../store-fixtures.ts";
import { describeWithKubectl, fakeAgentWithApi, KUBECTL } from "./harness.ts";

for (const version of ["1.27", "1.33"]) {
  describeWithKubectl(`kubectl ${version} debug`, KUBECTL.versions[version], (kubectl) => {
    test("debug POD reads the pod and asks for an ephemeral container: no panic on a missing securityContext", async () => {
      using dir = tempDir();
      await using agent = fakeAgentWithApi(dir.path);
      const file = join(dir.path, "web.yaml");
      writeFileSync(file, "apiVersion: v1\nkind: Pod\nmetadata: {name: web, namespace: default}\nspec:\n  containers: [{name: web, image: busybox, command: [sleep, '60']}]\n");
      await agent.kubelet.sync(desired(loadManifest(file, "lab")));
      await agent.advance(1);
      const result = await agent.session.run(kubectl, ["debug", "web-lab", "--image=busybox", "-c", "debugger"]);
      expect(result.stderr).not.toContain("panic");
      expect(result.stderr).not.toContain("nil pointer");
      // kubectl's own words for a server without the pods/ephemeralcontainers subresource (yet).
      expect(result.stderr).toContain("ephemeral containers are disabled for this cluster");
      expect(result.status).toBe(1);
    }, 60_000);
  });
}
