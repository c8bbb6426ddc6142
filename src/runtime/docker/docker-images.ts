/**
 * The image manager over the engine: imagePullPolicy applied the kubelet's way, pulls reported line
 * by line, failures turned into ImagePullError with the kubelet's waiting reasons.
 */
import type Dockerode from "dockerode";
import type { Clock } from "../../clock.ts";
import type { ContainerSpec, PullPolicy } from "../../manifest/types.ts";
import { dockerMessage, isNotFound } from "./docker-errors.ts";
import { ImagePullError, type ImageUser, type PullResult } from "../runtime.ts";

/** One JSON object of the engine's pull progress stream. */
interface PullEvent {
  status?: string;
  id?: string;
  progress?: string;
  error?: string;
  errorDetail?: { message?: string };
}

export class DockerImages {
  constructor(
    private readonly docker: Dockerode,
    private readonly clock: Clock,
  ) {}

  /** Size in bytes when the engine has the image, else undefined. */
  async localSize(image: string): Promise<number | undefined> {
    try {
      const info = await this.docker.getImage(image).inspect();
      return info.Size;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /**
   * The image's Config.User as the CRI's ImageStatus reports it: `USER[:GROUP]`, a number as the
   * uid, a name as the username; none is root.
   */
  async user(image: string): Promise<ImageUser> {
    const info = await this.docker.getImage(image).inspect();
    const user = (info.Config?.User ?? "").split(":")[0]!;
    if (user === "") return { uid: 0 };
    return /^\d+$/.test(user) ? { uid: Number(user) } : { username: user };
  }

  /**
   * Always pulls; IfNotPresent pulls only when the engine lacks the image; Never only checks.
   * Rejects with ImagePullError: ErrImageNeverPull for Never and a missing image, ErrImagePull for
   * any failed pull (unknown tag, unreachable registry).
   */
  async ensureImage(container: Pick<ContainerSpec, "image" | "imagePullPolicy">, onProgress?: (line: string) => void): Promise<PullResult> {
    const { image } = container;
    const policy: PullPolicy = container.imagePullPolicy;
    if (policy !== "Always") {
      const size = await this.localSize(image);
      if (size !== undefined) return { pulled: false, durationMs: 0, sizeBytes: size };
      if (policy === "Never") {
        throw new ImagePullError(
          image,
          "ErrImageNeverPull",
          `Container image "${image}" is not present with pull policy of Never`,
        );
      }
    }
    const started = this.clock.now();
    await this.pull(image, onProgress);
    return { pulled: true, durationMs: this.clock.now() - started, sizeBytes: await this.localSize(image) };
  }

  private async pull(image: string, onProgress?: (line: string) => void): Promise<void> {
    const failed = (cause: unknown, detail: string) =>
      new ImagePullError(image, "ErrImagePull", `Failed to pull image "${image}": ${detail}`, { cause });
    let stream: NodeJS.ReadableStream;
    try {
      stream = await this.docker.pull(withTag(image));
    } catch (error) {
      throw failed(error, dockerMessage(error));
    }
    // The engine answers 200 and then reports a failure inside the stream: look for `error`.
    const events = await new Promise<PullEvent[]>((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (error: unknown, output: PullEvent[]) => (error ? reject(failed(error, dockerMessage(error))) : resolve(output)),
        (event: PullEvent) => {
          const line = progressLine(event);
          if (line) onProgress?.(line);
        },
      );
    });
    const error = events.find((e) => e.error || e.errorDetail?.message);
    if (error) throw failed(error, error.errorDetail?.message ?? error.error ?? "unknown error");
  }
}

/**
 * The engine pulls every tag of a repository when none is given; the API's default is `latest`.
 * A digest (`@sha256:...`) or a tag after the last `/` is kept as written.
 */
export function withTag(image: string): string {
  if (image.includes("@")) return image;
  const last = image.slice(image.lastIndexOf("/") + 1);
  return last.includes(":") ? image : `${image}:latest`;
}

/** `Downloading 3f2a1b: [==>  ] 1.2MB/3MB`, or the bare status; undefined for empty events. */
export function progressLine(event: PullEvent): string | undefined {
  if (event.error) return `error: ${event.error}`;
  if (!event.status) return undefined;
  return [event.status, event.id ? ` ${event.id}` : "", event.progress ? `: ${event.progress}` : ""].join("");
}
