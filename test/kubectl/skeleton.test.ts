/**
 * The API's frame seen by real kubectl: version, discovery, health, the token, and an unknown path,
 * through the PATH dispatcher and the oldest and newest versioned kubectl directly.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openAgentDatabase } from "../../src/store/open.ts";
import { KUBE_VERSION, VERSION } from "../../src/version.ts";
import { CommitBroadcast } from "../../src/api/watch/commit-feed.ts";
import { startApi } from "../../src/api/start.ts";
import { tempDir } from "../store-fixtures.ts";
import { container, desired, pod } from "../pod-builder.ts";
import { describeWithKubectl, fakeAgentWithApi, KUBECTL, KUBECTLS_UNDER_TEST, KubectlSession, servedEmptyDatabase } from "./harness.ts";

const served = servedEmptyDatabase("minikubelet-kubectl-skeleton-");


for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(label, binary, (kubectl) => {
    test("version prints the server's version", async () => {
      const result = await served.session.run(kubectl, ["version", "-o", "json"]);
      expect(result.stderr).not.toContain("error");
      expect(result.status).toBe(0);
      expect(JSON.parse(result.stdout).serverVersion).toMatchObject({ major: "1", minor: KUBE_VERSION.split(".")[1], gitVersion: `v${KUBE_VERSION}+minikubelet-${VERSION}` });
    });

    test("api-resources lists pods, nodes and events from discovery", async () => {
      const result = await served.session.run(kubectl, ["api-resources"]);
      expect(result.status).toBe(0);
      const rows = result.stdout.split("\n").map((line) => line.split(/\s+/).filter(Boolean));
      expect(rows).toContainEqual(["pods", "po", "v1", "true", "Pod"]);
      expect(rows).toContainEqual(["nodes", "no", "v1", "false", "Node"]);
      expect(rows).toContainEqual(["events", "ev", "v1", "true", "Event"]);
      // Subresources are discovery's too, but not resources kubectl lists.
      expect(result.stdout).not.toContain("pods/log");
    });

    test("get --raw /healthz answers ok", async () => {
      const result = await served.session.run(kubectl, ["get", "--raw", "/healthz"]);
      expect(result).toMatchObject({ status: 0, stdout: "ok" });
    });

    test("an unknown path is a 404 Status", async () => {
      const result = await served.session.run(kubectl, ["get", "--raw", "/apis/nothing.example/v1/things"]);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("Error from server (NotFound): the server could not find the requested resource");
    });

    test("a wrong token is refused: You must be logged in", async () => {
      using wrong = new KubectlSession(served.dbPath, served.session.kubeconfigWithToken("not-the-token"));
      const result = await wrong.run(kubectl, ["get", "--raw", "/healthz"], { timeoutMs: 60_000 });
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("error: You must be logged in to the server (Unauthorized)");
    });
  });
}

describeWithKubectl("fake agent with API", KUBECTL.default, (kubectl) => {
  test("a kubelet on the fake runtime tells the API of its commits, and kubectl reaches that API", async () => {
    using scratch = tempDir("minikubelet-kubectl-fake-");
    await using fake = fakeAgentWithApi(scratch.path);
    const heard: number[] = [];
    fake.api.commits.subscribe((revision) => heard.push(revision));
    await fake.kubelet.sync(desired(pod({ name: "web", containers: [container("web")] })));
    await fake.advance(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(heard.at(-1)).toBe(fake.api.store.revision());
    expect(await fake.session.run(kubectl, ["get", "--raw", "/healthz"])).toMatchObject({ status: 0, stdout: "ok" });
  });
});

describeWithKubectl("listen addresses", KUBECTL.versions["1.33"] ?? KUBECTL.default, (kubectl) => {
  test.each(["::1", "localhost"])("kubectl reaches the API on %s through the certificate's names", async (hostname) => {
    using scratch = tempDir("minikubelet-kubectl-listen-");
    const db = join(scratch.path, "state.db");
    openAgentDatabase(db).close();
    const served = startApi({ dbPath: db, listen: { hostname, port: 0 }, nodeName: "lab", commits: new CommitBroadcast(), log: () => {} });
    try {
      using own = new KubectlSession(db);
      expect(await own.run(kubectl, ["get", "--raw", "/healthz"])).toMatchObject({ status: 0, stdout: "ok" });
    } finally {
      await served.stop();
    }
  });
});
