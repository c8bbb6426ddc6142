/**
 * `kubectl explain` against our OpenAPI documents, through the PATH dispatcher and the oldest and
 * newest versioned kubectl directly (1.27 reads /openapi/v2 first, newer ones only /openapi/v3), and
 * `kubectl apply`, which reaches the write only when the PATCH operation lists fieldValidation.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describeWithKubectl, KUBECTLS_UNDER_TEST, servedEmptyDatabase } from "./harness.ts";

const served = servedEmptyDatabase("minikubelet-kubectl-explain-");


for (const [label, binary] of KUBECTLS_UNDER_TEST) {
  describeWithKubectl(label, binary, (kubectl) => {
    async function explain(...args: string[]): Promise<string> {
      const result = await served.session.run(kubectl, ["explain", ...args]);
      expect(result.stderr).toBe("");
      expect(result.status).toBe(0);
      return result.stdout;
    }

    test("explain pod prints the kind's documentation and its fields", async () => {
      const out = await explain("pod");
      expect(out).toStartWith("KIND:       Pod\nVERSION:    v1\n");
      expect(out).toContain("Pod is a collection of containers that can run on a host.");
      expect(out).toMatch(/^ {2}spec\t<PodSpec>\n {4}Specification of the desired behavior of the pod\./m);
    });

    test("explain pod.spec marks required fields", async () => {
      const out = await explain("pod.spec");
      expect(out).toContain("FIELD: spec <PodSpec>");
      expect(out).toMatch(/^ {2}containers\t<\[\]Container> -required-$/m);
      expect(out).toMatch(/^ {2}restartPolicy\t<string>$/m);
    });

    test("explain pod.spec.containers.livenessProbe prints the field's and the Probe's documentation", async () => {
      const out = await explain("pod.spec.containers.livenessProbe");
      expect(out).toContain("FIELD: livenessProbe <Probe>");
      expect(out).toContain("Periodic probe of container liveness. Container will be restarted if the\n    probe fails.");
      expect(out).toContain("Probe describes a health check to be performed against a container");
      expect(out).toMatch(/^ {2}periodSeconds\t<integer>\n {4}How often \(in seconds\) to perform the probe\./m);
      expect(out).toMatch(/^ {2}httpGet\t<HTTPGetAction>\n {4}HTTPGet specifies an HTTP GET request to perform\./m);
    });

    test("explain node and explain events find their kinds", async () => {
      const node = await explain("node");
      expect(node).toStartWith("KIND:       Node\nVERSION:    v1\n");
      expect(node).toMatch(/^ {2}status\t<NodeStatus>$/m);
      const events = await explain("events");
      expect(events).toStartWith("KIND:       Event\nVERSION:    v1\n");
      expect(events).toMatch(/^ {2}involvedObject\t<ObjectReference> -required-$/m);
      expect(events).toMatch(/^ {2}eventTime\t<string>$/m);
    });

    test("explain pod --recursive walks the whole schema", async () => {
      const out = await explain("pod", "--recursive");
      expect(out).toMatch(/^ {6}livenessProbe\t<Probe>$/m);
      expect(out).toMatch(/^ {8}httpGet\t<HTTPGetAction>$/m);
      expect(out).toMatch(/^ {6}resources\t<ResourceRequirements>$/m);
      expect(out.split("\n").length).toBeGreaterThan(1000);
    });

    test("explain --output plaintext-openapiv2 reads the protobuf v2 document", async () => {
      const out = await explain("pod.spec.containers.livenessProbe", "--output", "plaintext-openapiv2");
      expect(out).toContain("RESOURCE: livenessProbe <Object>");
      expect(out).toContain("Periodic probe of container liveness.");
      expect(out).toMatch(/^ {3}periodSeconds\t<integer>\n {5}How often \(in seconds\) to perform the probe\./m);
    });

    test("apply gets past validation to the write (the PATCH operation lists fieldValidation)", async () => {
      const manifest = join(served.session.dir, "pod.yaml");
      writeFileSync(manifest, "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: {containers: [{name: c, image: busybox}]}\n");
      const result = await served.session.run(kubectl, ["apply", "-f", manifest]);
      expect(result.status).toBe(1);
      // Refused by the server when it creates, not by the client's validation.
      expect(result.stderr).toContain('error when creating "');
      expect(result.stderr).not.toContain("error validating data");
    });
  });
}
