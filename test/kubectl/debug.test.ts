/**
 * `kubectl debug` against the compiled agent (process runtime). Issue 22: kubectl read the pod's
 * spec.securityContext, which the API server always serves, and panicked on a missing one. Issue 23:
 * the pods/ephemeralcontainers subresource adds the debug container to an API pod, which the loop
 * starts once beside the others and reports in ephemeralContainerStatuses and describe; a file
 * pod is refused in the API server's words for a static pod.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, useAgentWithApi } from "./harness.ts";

const live = useAgentWithApi((ws) => ws.write("static.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: static}\nspec:\n  containers:\n    - {name: app, image: busybox, command: [sleep, '600']}\n"));

const kubectl = (binary: string, ...args: string[]) => live.session.run(binary, args, { timeoutMs: 60_000 });

for (const version of ["1.27", "1.33"]) {
  describeWithKubectl(`kubectl ${version} debug`, KUBECTL.versions[version], (binary) => {
    const pod = `web-${version.replace(".", "")}`;

    test("debug POD --target adds an ephemeral container that runs once, beside the pod's, and is reported apart", async () => {
      const file = join(live.session.dir, `${pod}.yaml`);
      writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${pod}}\nspec:\n  containers:\n    - {name: web, image: busybox, command: [sleep, '600']}\n`);
      expect((await kubectl(binary, "apply", "-f", file)).status).toBe(0);
      await live.agent.waitForOutput(`Started default/${pod} web`, 15_000);
      const debug = await kubectl(binary, "debug", pod, "--image=busybox", "-c", "dbg", "--target=web", "--", "sh", "-c", "echo debugging; sleep 600");
      expect(debug.stderr).not.toContain("panic");
      expect(debug).toMatchObject({ status: 0 });
      expect(debug.stdout).toContain('Targeting container "web"');
      await live.agent.waitForOutput(`Started default/${pod} dbg`, 15_000);
      const state = await waitFor("the debug container running", async () => {
        const { stdout } = await kubectl(binary, "get", "pod", pod, "-o", "jsonpath={.status.ephemeralContainerStatuses[0].name}:{.status.ephemeralContainerStatuses[0].ready}:{.status.ephemeralContainerStatuses[0].state.running.startedAt}");
        return stdout.split(":").length > 2 && !stdout.endsWith(":") ? stdout : undefined;
      }, 15_000);
      expect(state).toMatch(/^dbg:false:\d{4}-/);
      // The pod's own containers are untouched: one container, ready, no restart.
      const get = await kubectl(binary, "get", "pod", pod, "--no-headers");
      expect(get.stdout).toMatch(new RegExp(`^${pod} +1/1 +Running +0 `));
      expect((await waitFor("the debug container's output", async () => ((await kubectl(binary, "logs", pod, "-c", "dbg")).stdout || undefined), 10_000))).toBe("debugging\n");
      // exec reaches it as any container of the pod (the API server's VisitContainers includes ephemeral ones).
      expect(await kubectl(binary, "exec", pod, "-c", "dbg", "--", "echo", "inside")).toMatchObject({ status: 0, stdout: "inside\n" });
      const describe = await kubectl(binary, "describe", "pod", pod);
      expect(describe.stdout).toMatch(/\nEphemeral Containers:\n  dbg:\n    Container ID: +process:\/\//);
    }, 90_000);

    test("debug of a file pod is the API server's refusal for a static pod", async () => {
      const refused = await kubectl(binary, "debug", "static-n1", "--image=busybox", "-c", "dbg");
      expect(refused.status).toBe(1);
      expect(refused.stderr).not.toContain("panic");
      expect(refused.stderr).toContain('The Pod "static-n1" is invalid: []: Forbidden: static pods do not support ephemeral containers');
    }, 60_000);
  });
}
