/** The docker runtime runs the same interface-level suite as the process runtime, so they cannot drift. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { runtimeContract } from "../runtime-contract.ts";
import { BUSYBOX, describeDocker, PAUSE } from "./helpers.ts";

describeDocker("DockerRuntime (real dockerd)", () => {
  let volumeRoot: string | undefined;
  runtimeContract(
    "docker",
    () => {
      volumeRoot = mkdtempSync(join(tmpdir(), "minikubelet-docker-contract-"));
      return new DockerRuntime({ pauseImage: PAUSE, volumeRoot });
    },
    {
      image: BUSYBOX,
      cleanup: () => {
        if (volumeRoot) rmSync(volumeRoot, { recursive: true, force: true });
      },
    },
  );
});
