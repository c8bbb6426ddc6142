import { afterEach, beforeEach, expect, test } from "bun:test";
import { ImagePullError } from "../../src/runtime/runtime.ts";
import { bbContainer, BUSYBOX, DockerTestEnv, describeDocker, docker, REGISTRY, REGISTRY_BUSYBOX } from "./helpers.ts";

/** Removes one tag only: the layers stay, shared with minikubelet-test/busybox:1. */
async function untag(image: string): Promise<void> {
  await docker
    .getImage(image)
    .remove({ noprune: true })
    .catch(() => undefined);
}

describeDocker("DockerRuntime images (real dockerd, registry on 127.0.0.1:5000)", () => {
  let env: DockerTestEnv;
  beforeEach(() => {
    env = new DockerTestEnv();
  });
  afterEach(async () => {
    await env.cleanup();
  });

  test("the local registry answers (started by ./scripts/docker-env up)", async () => {
    const response = await fetch(`http://${REGISTRY}/v2/`);
    expect(response.status).toBe(200);
  });

  test("Always pulls from the registry, reporting progress and the time taken", async () => {
    await untag(REGISTRY_BUSYBOX);
    const lines: string[] = [];
    const result = await env.runtime.ensureImage(
      bbContainer("pull", "true", { image: REGISTRY_BUSYBOX, imagePullPolicy: "Always" }),
      (line) => lines.push(line),
    );
    expect(result.pulled).toBe(true);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(result.sizeBytes).toBeGreaterThan(0);
    expect(lines.some((l) => l.includes("Status: Downloaded newer image") || l.includes("Status: Image is up to date"))).toBe(true);
    expect((await docker.getImage(REGISTRY_BUSYBOX).inspect()).Id).toMatch(/^sha256:/);

    // Always pulls again even when the image is present (the registry says it is up to date).
    const again = await env.runtime.ensureImage(bbContainer("pull", "true", { image: REGISTRY_BUSYBOX, imagePullPolicy: "Always" }));
    expect(again.pulled).toBe(true);
  });

  test("IfNotPresent does not pull a present image, and pulls a missing one", async () => {
    const present = await env.runtime.ensureImage(bbContainer("c", "true", { image: BUSYBOX, imagePullPolicy: "IfNotPresent" }));
    expect(present).toMatchObject({ pulled: false, durationMs: 0 });

    await untag(REGISTRY_BUSYBOX);
    const pulled = await env.runtime.ensureImage(bbContainer("c", "true", { image: REGISTRY_BUSYBOX, imagePullPolicy: "IfNotPresent" }));
    expect(pulled.pulled).toBe(true);
  });

  test("a tag the registry does not have fails with ErrImagePull naming the image", async () => {
    const image = `${REGISTRY}/minikubelet-test/busybox:no-such-tag`;
    const error = await env.runtime
      .ensureImage(bbContainer("c", "true", { image, imagePullPolicy: "IfNotPresent" }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ImagePullError);
    expect(error).toMatchObject({ reason: "ErrImagePull", image });
    expect((error as Error).message).toContain(`Failed to pull image "${image}"`);
  });

  test("Never with a missing image fails with ErrImageNeverPull; with a present one it is fine", async () => {
    const image = `${REGISTRY}/minikubelet-test/never-pushed:1`;
    const error = await env.runtime.ensureImage(bbContainer("c", "true", { image, imagePullPolicy: "Never" })).catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "ImagePullError",
      reason: "ErrImageNeverPull",
      message: `Container image "${image}" is not present with pull policy of Never`,
    });
    const present = await env.runtime.ensureImage(bbContainer("c", "true", { image: BUSYBOX, imagePullPolicy: "Never" }));
    expect(present.pulled).toBe(false);
  });

  test("imageUser reads the image's USER: none is root, a number its uid, a name its username", async () => {
    expect(await env.runtime.imageUser(BUSYBOX)).toEqual({ uid: 0 });
    const made: string[] = [];
    try {
      for (const [tag, user] of [["uid", "1000:3000"], ["name", "nobody"]] as const) {
        const container = await docker.createContainer({ Image: BUSYBOX, Cmd: ["true"] });
        await container.commit({ repo: "minikubelet-test/busybox-user", tag, changes: `USER ${user}` });
        await container.remove();
        made.push(`minikubelet-test/busybox-user:${tag}`);
      }
      expect(await env.runtime.imageUser("minikubelet-test/busybox-user:uid")).toEqual({ uid: 1000 });
      expect(await env.runtime.imageUser("minikubelet-test/busybox-user:name")).toEqual({ username: "nobody" });
    } finally {
      for (const image of made) await untag(image);
    }
  });
}, { registry: true });
