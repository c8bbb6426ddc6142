/** The docker runtime runs the same interface-level suite as the process runtime, so they cannot drift. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DockerRuntime } from "../../src/runtime/docker/docker.ts";
import { runtimeContract } from "../runtime-contract.ts";
import { BUSYBOX, describeDocker, PAUSE } from "./helpers.ts";

describeDocker("DockerRuntime (real dockerd)", () => {
  const volumeRoots: string[] = [];
  runtimeContract(
    "docker",
    (clock) => {
      const volumeRoot = mkdtempSync(join(tmpdir(), "minikubelet-docker-contract-"));
      volumeRoots.push(volumeRoot);
      return new DockerRuntime({ pauseImage: PAUSE, volumeRoot, clock });
    },
    {
      image: BUSYBOX,
      cleanup: () => {
        for (const volumeRoot of volumeRoots.splice(0)) rmSync(volumeRoot, { recursive: true, force: true });
      },
    },
  );
});
