/**
 * `kubectl set image` of an API pod on the docker runtime: the changed container is killed, its new
 * image pulled (from the local registry, by digest: the same content under another reference),
 * created and started, restart count +1, while the other container keeps running untouched.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { LABEL } from "../../src/runtime/labels.ts";
import { BUSYBOX, describeDocker, docker, REGISTRY, REGISTRY_BUSYBOX } from "../docker/helpers.ts";
import { Agent, ensureBinary, waitFor, Workspace } from "../e2e/helpers.ts";
import { describeWithKubectl, KUBECTL, KubectlSession } from "./harness.ts";

const NAMESPACE = "kubectl-update";

describeDocker(
  "kubectl set image on the docker runtime",
  () => {
    let ws: Workspace;
    let agent: Agent;
    let session: KubectlSession;

    beforeAll(async () => {
      ws = new Workspace();
      ensureBinary();
      agent = new Agent(ws, ["--api-listen", "127.0.0.1:0", "--stop-pods-on-exit", "--runtime", "docker"], { node: "kupdate" });
      await waitFor("the API address in the banner", () => /api +https:/.test(agent.stderr), 15_000, () => agent.stderr);
      session = new KubectlSession(ws.db, ws.cli("kubeconfig"));
    }, 120_000);

    afterAll(async () => {
      // Their sleeps as PID 1 wait out a 30 s grace under docker: the agent is hurried, the containers removed below.
      await agent?.terminate(20_000, 2_000);
      session?.[Symbol.dispose]();
      ws?.cleanup();
      const left = await docker.listContainers({ all: true, filters: { label: [`${LABEL.podNamespace}=${NAMESPACE}`] } });
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    }, 60_000);

    /** The registry's digest of the test image: the same image under a reference the node has not pulled by. */
    async function digestReference(): Promise<string> {
      const [repository, tag] = REGISTRY_BUSYBOX.slice(REGISTRY.length + 1).split(":");
      const response = await fetch(`http://${REGISTRY}/v2/${repository}/manifests/${tag}`, {
        method: "HEAD",
        headers: { Accept: "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json" },
      });
      return `${REGISTRY}/${repository}@${response.headers.get("docker-content-digest")}`;
    }

    describeWithKubectl("set image", KUBECTL.versions["1.33"], (kubectl) => {
      test("restarts only the changed container: Killing, Pulling, Created, Started, restart count 1", async () => {
        const file = join(session.dir, "web.yaml");
        writeFileSync(
          file,
          [
            "apiVersion: v1",
            "kind: Pod",
            `metadata: {name: web, namespace: ${NAMESPACE}}`,
            "spec:",
            "  containers:",
            // A shell that ends on SIGTERM (a bare sleep as PID 1 would wait out the grace period).
            `  - {name: web, image: "${REGISTRY_BUSYBOX}", imagePullPolicy: Always, command: [sh, -c, 'trap "exit 143" TERM; sleep 3600 & wait']}`,
            `  - {name: side, image: "${BUSYBOX}", imagePullPolicy: Never, command: [sleep, "3600"]}`,
            "",
          ].join("\n"),
        );
        // As on a cluster, the namespace exists before a pod is created in it (NamespaceLifecycle).
        expect((await session.run(kubectl, ["create", "namespace", NAMESPACE])).status).toBe(0);
        expect((await session.run(kubectl, ["apply", "-f", file])).status).toBe(0);
        await agent.waitForOutput(`Started ${NAMESPACE}/web side`, 60_000);
        await agent.waitForOutput(`Started ${NAMESPACE}/web web`, 60_000);
        const image = await digestReference();
        const mark = agent.stdout.length;
        const set = await session.run(kubectl, ["-n", NAMESPACE, "set", "image", "pod/web", `web=${image}`], { timeoutMs: 60_000 });
        expect(set).toMatchObject({ status: 0, stdout: "pod/web image updated\n" });
        await waitFor("web started again", () => agent.stdout.slice(mark).includes(`Started ${NAMESPACE}/web web`), 60_000, () => agent.stdout.slice(mark));
        const lines = agent.stdout
          .slice(mark)
          .split("\n")
          .filter((line) => line.includes(`${NAMESPACE}/web`))
          .map((line) => line.replace(/^\S+ /, ""));
        expect(lines.map((line) => line.split(":")[0])).toEqual([
          `Normal Killing ${NAMESPACE}/web web`,
          `Warning Exited ${NAMESPACE}/web web`,
          `Normal Pulling ${NAMESPACE}/web web`,
          `Normal Pulled ${NAMESPACE}/web web`,
          `Normal Created ${NAMESPACE}/web web`,
          `Normal Started ${NAMESPACE}/web web`,
        ]);
        expect(lines[0]).toEndWith("Container web definition changed, will be restarted");
        expect(lines[2]).toEndWith(`Pulling image "${image}"`);
        const statuses = await session.run(kubectl, ["-n", NAMESPACE, "get", "pod", "web", "-o", 'jsonpath={range .status.containerStatuses[*]}{.name}={.restartCount} {end}']);
        expect(statuses.stdout.trim().split(" ").sort()).toEqual(["side=0", "web=1"]);
      }, 120_000);
    });
  },
  { registry: true },
);
