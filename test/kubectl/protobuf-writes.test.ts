/**
 * kubectl 1.32 and later send the typed-client writes as protobuf (client-go's generated clients
 * prefer it), 1.27 as JSON; against the compiled agent (process runtime), each one's `debug
 * --copy-to` and `debug node/NAME` create their pods and the pods run. Before, 1.33's were 400
 * `the request body is not a JSON object`.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitFor } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, useAgentWithApi } from "./harness.ts";

const live = useAgentWithApi();

const kubectl = (binary: string, ...args: string[]) => live.session.run(binary, args, { timeoutMs: 60_000 });

/** The pod's phase and its containers' ready flags once it runs (undefined until then). */
async function running(binary: string, pod: string): Promise<string | undefined> {
  const { stdout } = await kubectl(binary, "get", "pod", pod, "-o", "jsonpath={.status.phase} {.status.containerStatuses[*].ready}");
  return /^Running( true)+$/.test(stdout) ? stdout : undefined;
}

for (const [version, encoding] of [["1.27", "application/json"], ["1.33", "application/vnd.kubernetes.protobuf"]] as const) {
  describeWithKubectl(`kubectl ${version}'s typed-client writes (${encoding})`, KUBECTL.versions[version], (binary) => {
    const web = `web-${version.replace(".", "")}`;

    test("debug POD --copy-to creates the copy, with the debug container beside the pod's, and it runs", async () => {
      const file = join(live.session.dir, `${web}.yaml`);
      writeFileSync(file, `apiVersion: v1\nkind: Pod\nmetadata: {name: ${web}}\nspec:\n  containers:\n    - {name: web, image: busybox, command: [sleep, '600']}\n`);
      expect((await kubectl(binary, "apply", "-f", file)).status).toBe(0);
      await live.agent.waitForOutput(`Started default/${web} web`, 15_000);
      const debug = await kubectl(binary, "-v=8", "debug", web, `--copy-to=${web}-copy`, "--image=busybox", "--", "sleep", "60");
      // The create's own headers: the first Content-Type after the POST line (1.27 and 1.33 print them differently).
      const create = debug.stderr.slice(debug.stderr.search(/POST[^\n]*\/namespaces\/default\/pods/));
      expect(/Content-Type: (\S+)/.exec(create)?.[1]).toBe(encoding);
      expect(debug.stderr).not.toContain("not a JSON object");
      expect(debug.status).toBe(0);
      await live.agent.waitForOutput(`Started default/${web}-copy web`, 15_000);
      expect(await waitFor(`${web}-copy running`, () => running(binary, `${web}-copy`), 15_000)).toBe("Running true true");
      const names = await kubectl(binary, "get", "pod", `${web}-copy`, "-o", "jsonpath={.spec.containers[*].name}");
      expect(names.stdout).toMatch(/^web debugger-[a-z0-9]{5}$/);
    }, 90_000);

    for (const profile of ["legacy", "general"]) {
      test(`debug node/NODE --profile=${profile} creates node-debugger-NODE-xxxxx (host namespaces, / at /host) and it runs`, async () => {
        const debug = await kubectl(binary, "debug", "node/n1", "--image=busybox", `--profile=${profile}`, "--", "sleep", "60");
        expect(debug.stderr).not.toContain("not a JSON object");
        expect(debug).toMatchObject({ status: 0 });
        const pod = /Creating debugging pod (node-debugger-n1-[a-z0-9]{5})/.exec(debug.stdout)?.[1];
        expect(pod).toBeDefined();
        expect(await waitFor(`${pod} running`, () => running(binary, pod!), 15_000)).toBe("Running true");
        const spec = await kubectl(binary, "get", "pod", pod!, "-o", "jsonpath={.spec.hostPID} {.spec.hostNetwork} {.spec.hostIPC} {.spec.volumes[0].hostPath.path} {.spec.containers[0].volumeMounts[0].mountPath}");
        expect(spec.stdout).toBe("true true true / /host");
      }, 90_000);
    }
  });
}
