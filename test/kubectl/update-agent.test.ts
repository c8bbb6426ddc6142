/**
 * Updating API pods with the real kubectl against the compiled agent (process runtime): client-side
 * apply twice (the second is unchanged), an image change that restarts that container only, a
 * command change refused in the API server's words, label/annotate, set image, edit with EDITOR
 * set to a script, and replace --force; apply on the oldest and the newest kubectl.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { POD_UPDATE_FORBIDDEN } from "../../src/manifest/pod-update.ts";
import { Agent, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession, startAgentWithApi } from "./harness.ts";

let ws: Workspace;
let agent: Agent;
let session: KubectlSession;

beforeAll(async () => {
  ws = new Workspace();
  ws.write("static.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: static}\nspec:\n  containers:\n    - {name: app, image: busybox, command: [sleep, '600']}\n");
  ({ agent, session } = await startAgentWithApi(ws, ["--stop-pods-on-exit"]));
  await agent.waitForOutput("Started default/static-n1 app", 15_000);
}, 120_000);

afterAll(async () => {
  await agent?.terminate();
  session?.[Symbol.dispose]();
  ws?.cleanup();
}, 60_000);

/** A pod of two sleeping containers, `web` and `side`, as a file kubectl applies. */
function manifest(name: string, web: { image?: string; command?: string } = {}): string {
  return [
    "apiVersion: v1",
    "kind: Pod",
    `metadata: {name: ${name}, labels: {app: ${name}}}`,
    "spec:",
    "  containers:",
    `  - {name: web, image: "${web.image ?? "busybox:1"}", command: [sleep, "${web.command ?? "1000"}"]}`,
    '  - {name: side, image: "busybox:1", command: [sleep, "1000"]}',
    "",
  ].join("\n");
}

/** Writes a file kubectl reads, beside (not in) the agent's manifest directory. */
function writeFile(name: string, text: string): string {
  const path = join(ws.path, name);
  writeFileSync(path, text);
  return path;
}

async function kubectl(binary: string, ...args: string[]) {
  return session.run(binary, args, { timeoutMs: 60_000 });
}

/** `web=RESTARTS side=RESTARTS` once both containers run, as `kubectl get` reports them. */
async function restartsWhenRunning(binary: string, name: string): Promise<string> {
  const template = '{range .status.containerStatuses[*]}{.name}={.restartCount}:{.state.running.startedAt}{" "}{end}';
  return waitFor(`both containers of ${name} running`, async () => {
    const { stdout } = await kubectl(binary, "get", "pod", name, "-o", `jsonpath=${template}`);
    const entries = stdout.trim().split(" ").filter(Boolean);
    if (entries.length !== 2 || entries.some((entry) => entry.endsWith(":"))) return undefined;
    return entries.map((entry) => entry.split(":")[0]).sort().join(" ");
  }, 20_000);
}

for (const [label, binary] of [["kubectl 1.27", KUBECTL.versions["1.27"]], ["kubectl 1.33", KUBECTL.versions["1.33"]]] as const) {
  describeWithKubectl(`${label}: apply of an API pod`, binary, (kubectl_) => {
    const name = `web-${label.slice(-4).replace(".", "")}`;
    test("apply creates, a second apply is unchanged, a new image restarts that container only, a new command is refused", async () => {
      const file = writeFile(`${name}.yaml`, manifest(name));
      expect(await kubectl(kubectl_, "apply", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${name} created\n` });
      expect(await restartsWhenRunning(kubectl_, name)).toBe("side=0 web=0");
      expect(await kubectl(kubectl_, "apply", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${name} unchanged\n` });

      writeFile(`${name}.yaml`, manifest(name, { image: "busybox:2" }));
      // kubectl diff is a server-side dry run of the same patch: the one changed line and nothing else.
      const diff = await kubectl(kubectl_, "diff", "-f", file);
      expect(diff.status).toBe(1);
      expect(diff.stdout.split("\n").filter((line) => /^[-+] /.test(line))).toEqual(["-    image: busybox:1", "+    image: busybox:2"]);
      expect(await kubectl(kubectl_, "apply", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${name} configured\n` });
      await agent.waitForOutput(`Normal Killing default/${name} web: Container web definition changed, will be restarted`, 15_000);
      expect(await waitFor("web restarted", async () => ((await restartsWhenRunning(kubectl_, name)) === "side=0 web=1" ? "ok" : undefined), 20_000)).toBe("ok");
      const image = await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.spec.containers[0].image}");
      expect(image.stdout).toBe("busybox:2");
      expect(agent.stdout).not.toContain(`Killing default/${name} side`);

      writeFile(`${name}.yaml`, manifest(name, { image: "busybox:2", command: "5" }));
      const refused = await kubectl(kubectl_, "apply", "-f", file);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain(`The Pod "${name}" is invalid: spec: Forbidden: ${POD_UPDATE_FORBIDDEN}`);
      expect(refused.stderr).toContain('spec.containers[0].command[1]: "1000" -> "5"');
    }, 90_000);
  });
}

describeWithKubectl("kubectl label, annotate, set image, edit and replace of an API pod", KUBECTL.versions["1.33"], (kubectl_) => {
  const name = "tools";
  beforeAll(async () => {
    expect((await kubectl(kubectl_, "apply", "-f", writeFile(`${name}.yaml`, manifest(name)))).status).toBe(0);
    await restartsWhenRunning(kubectl_, name);
  });

  test("label and annotate show in get --show-labels and the object, restarting nothing", async () => {
    expect(await kubectl(kubectl_, "label", "pod", name, "tier=front")).toMatchObject({ status: 0, stdout: `pod/${name} labeled\n` });
    expect(await kubectl(kubectl_, "annotate", "pod", name, "note=hello")).toMatchObject({ status: 0, stdout: `pod/${name} annotated\n` });
    const shown = await kubectl(kubectl_, "get", "pod", name, "--show-labels", "--no-headers");
    expect(shown.stdout).toContain("app=tools,tier=front");
    expect((await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.metadata.annotations.note}")).stdout).toBe("hello");
    expect(await restartsWhenRunning(kubectl_, name)).toBe("side=0 web=0");
  });

  test("set image restarts that container with the new image", async () => {
    expect(await kubectl(kubectl_, "set", "image", `pod/${name}`, "side=busybox:9")).toMatchObject({ status: 0, stdout: `pod/${name} image updated\n` });
    await agent.waitForOutput(`Killing default/${name} side: Container side definition changed, will be restarted`, 15_000);
    expect(await waitFor("side restarted", async () => ((await restartsWhenRunning(kubectl_, name)) === "side=1 web=0" ? "ok" : undefined), 20_000)).toBe("ok");
  });

  test("edit with EDITOR set to a script sends the edited image", async () => {
    const editor = writeFile("edit-image.sh", "#!/bin/sh\nsed -i 's/image: busybox:9/image: busybox:10/' \"$1\"\n");
    chmodSync(editor, 0o755);
    const edited = await session.run(kubectl_, ["edit", "pod", name], { timeoutMs: 60_000, env: { EDITOR: editor } });
    expect(edited).toMatchObject({ status: 0, stdout: `pod/${name} edited\n` });
    expect((await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.spec.containers[1].image}")).stdout).toBe("busybox:10");
  });

  test("kubectl patch with each patch type; the status subresource stays read-only", async () => {
    const json = '[{"op":"replace","path":"/spec/containers/0/image","value":"busybox:12"}]';
    expect(await kubectl(kubectl_, "patch", "pod", name, "--type=json", "-p", json)).toMatchObject({ status: 0, stdout: `pod/${name} patched\n` });
    expect(await kubectl(kubectl_, "patch", "pod", name, "--type=merge", "-p", '{"metadata":{"labels":{"patched":"merge"}}}')).toMatchObject({ status: 0 });
    const strategic = '{"spec":{"containers":[{"name":"web","image":"busybox:13"}]}}';
    expect(await kubectl(kubectl_, "patch", "pod", name, "--type=strategic", "-p", strategic)).toMatchObject({ status: 0 });
    const got = await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.spec.containers[0].image} {.metadata.labels.patched}");
    expect(got.stdout).toBe("busybox:13 merge");
    const status = await kubectl(kubectl_, "patch", "pod", name, "--subresource=status", "--type=merge", "-p", '{"status":{"phase":"Failed"}}');
    expect(status.status).toBe(1);
    expect(status.stderr).toContain("Error from server (MethodNotAllowed)");
  });

  test("a manifest file's pod is refused naming its file, for a label as for set image", async () => {
    for (const args of [["label", "pod", "static-n1", "x=y"], ["set", "image", "pod/static-n1", "app=busybox:2"]]) {
      const refused = await kubectl(kubectl_, ...args);
      expect(refused.status).toBe(1);
      // label prints `Error from server (MethodNotAllowed): ...`, set image `error: failed to patch image update to pod template: ...`.
      expect(refused.stderr).toContain(`pod static-n1 comes from the manifest file ${join(ws.manifests, "static.yaml")}: edit the file to change it`);
    }
  });

  test("replace sends the file as a PUT: the stored pod with new images is taken; the first file, without what the admission added, and a new command are refused", async () => {
    // As on a cluster, a PUT carries the whole pod: the ServiceAccount admission's token volume is in it, so the file is what get -o json serves.
    const stored = JSON.parse((await kubectl(kubectl_, "get", "pod", name, "-o", "json")).stdout);
    expect(stored.spec.containers.map((c: { name: string }) => c.name)).toEqual(["web", "side"]);
    stored.spec.containers[0].image = "busybox:11";
    stored.spec.containers[1].image = "busybox:10";
    const file = writeFile(`${name}-put.json`, JSON.stringify(stored));
    expect(await kubectl(kubectl_, "replace", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${name} replaced\n` });
    expect((await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.spec.containers[*].image}")).stdout).toBe("busybox:11 busybox:10");
    const first = await kubectl(kubectl_, "replace", "-f", writeFile(`${name}-first.yaml`, manifest(name, { image: "busybox:11" })));
    expect(first.status).toBe(1);
    expect(first.stderr).toContain(`The Pod "${name}" is invalid: spec: Forbidden: pod updates may not change fields other than`);
    expect(first.stderr).toContain('spec.serviceAccountName: "default" -> <unset>');
    stored.spec.containers[0].command = ["sleep", "7"];
    const refused = await kubectl(kubectl_, "replace", "-f", writeFile(`${name}-put.json`, JSON.stringify(stored)));
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(`The Pod "${name}" is invalid: spec: Forbidden: pod updates may not change fields other than`);
  });

  test("replace --force deletes the pod and creates it again from the file (a new uid)", async () => {
    const before = (await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.metadata.uid}")).stdout;
    const file = writeFile(`${name}-replaced.yaml`, manifest(name, { command: "999" }));
    const replaced = await kubectl(kubectl_, "replace", "--force", "--grace-period=1", "-f", file);
    expect(replaced).toMatchObject({ status: 0, stdout: `pod "${name}" deleted\npod/${name} replaced\n` });
    const after = (await kubectl(kubectl_, "get", "pod", name, "-o", "jsonpath={.metadata.uid} {.spec.containers[0].command[1]}")).stdout;
    expect(after).toEndWith(" 999");
    expect(after).not.toStartWith(before);
    expect(await restartsWhenRunning(kubectl_, name)).toBe("side=0 web=0");
  });

  test("apply --server-side creates a pod, then merges the fields it sends (an image here)", async () => {
    const ssa = "ssa";
    const file = writeFile(`${ssa}.yaml`, manifest(ssa));
    expect(await kubectl(kubectl_, "apply", "--server-side", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${ssa} serverside-applied\n` });
    await restartsWhenRunning(kubectl_, ssa);
    writeFile(`${ssa}.yaml`, manifest(ssa, { image: "busybox:7" }));
    expect(await kubectl(kubectl_, "apply", "--server-side", "-f", file)).toMatchObject({ status: 0, stdout: `pod/${ssa} serverside-applied\n` });
    expect((await kubectl(kubectl_, "get", "pod", ssa, "-o", "jsonpath={.spec.containers[0].image}")).stdout).toBe("busybox:7");
    expect(await waitFor("web restarted", async () => ((await restartsWhenRunning(kubectl_, ssa)) === "side=0 web=1" ? "ok" : undefined), 20_000)).toBe("ok");
  });
});
