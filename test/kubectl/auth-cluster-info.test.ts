/**
 * `kubectl auth can-i`, `auth whoami` and `cluster-info` with the real kubectl (the dispatcher,
 * 1.27 and 1.33) against a served database: the API's one user may do everything and is named as
 * the kubeconfig names it (1.27 asks authentication.k8s.io/v1beta1, 1.33 v1, and 1.33 POSTs the
 * reviews as protobuf); cluster-info names the control plane's address, with no cluster services,
 * and the services it found none of cannot be created.
 */
import { expect, test } from "bun:test";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, servedEmptyDatabase } from "./harness.ts";

const served = servedEmptyDatabase("minikubelet-kubectl-auth-");
const plain = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");

for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(label, binary, (kubectl) => {
    const run = (...args: string[]) => served.session.run(kubectl, args);

    test("auth can-i: yes for a resource, across namespaces, for a non-resource URL; --list shows every verb on everything", async () => {
      expect(await run("auth", "can-i", "create", "pods")).toMatchObject({ status: 0, stdout: "yes\n", stderr: "" });
      expect(await run("auth", "can-i", "delete", "namespaces", "--all-namespaces")).toMatchObject({ status: 0, stdout: "yes\n" });
      expect(await run("auth", "can-i", "get", "/logs")).toMatchObject({ status: 0, stdout: "yes\n" });
      const list = await run("auth", "can-i", "--list");
      expect(list.status).toBe(0);
      expect(list.stdout.split("\n").map((line) => line.trim().split(/\s{2,}/))).toEqual([
        ["Resources", "Non-Resource URLs", "Resource Names", "Verbs"],
        ["*.*", "[]", "[]", "[*]"],
        ["[*]", "[]", "[*]"],
        [""],
      ]);
    });

    test("auth whoami prints the kubeconfig's user and its groups", async () => {
      const whoami = await run("auth", "whoami");
      expect(whoami).toMatchObject({ status: 0, stderr: "" });
      expect(whoami.stdout.split("\n").map((line) => line.split(/\s{2,}/))).toEqual([["ATTRIBUTE", "VALUE"], ["Username", "minikubelet-admin"], ["Groups", "[system:masters system:authenticated]"], [""]]);
      const config = await run("config", "view", "-o", "jsonpath={.users[0].name}");
      expect(config.stdout).toBe("minikubelet-admin");
      const json = JSON.parse((await run("auth", "whoami", "-o", "json")).stdout);
      expect(json.status.userInfo).toEqual({ username: "minikubelet-admin", groups: ["system:masters", "system:authenticated"] });
    });

    test("cluster-info names the control plane's address; services are none, and refused", async () => {
      const info = await run("cluster-info");
      expect(info.status).toBe(0);
      const server = (await run("config", "view", "-o", "jsonpath={.clusters[0].cluster.server}")).stdout;
      expect(server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      expect(plain(info.stdout)).toBe(`Kubernetes control plane is running at ${server}\n\nTo further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.\n`);
      expect(await run("get", "services", "-A")).toMatchObject({ status: 0, stdout: "", stderr: "No resources found\n" });
      const create = await run("create", "service", "clusterip", "web", "--tcp=80:8080");
      expect(create).toMatchObject({ status: 1, stderr: 'error: failed to create ClusterIP service: create is not supported on resources of kind "services"\n' });
    });
  });
}
