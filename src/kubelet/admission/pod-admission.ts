/**
 * The loop's admission of new pods (the kubelet's HandlePodAdditions and its admit handlers): under
 * DiskPressure a new pod waits, Pending, for the pressure to clear; otherwise its requests must fit
 * in allocatable beside the pods already admitted, and it must name this node's OS (checked
 * first), or it is refused as the kubelet's rejectPod leaves it (Failed, never started). Adopted pods never come through here: a restart refuses nothing.
 */
import type { NodeAllocatable } from "../../eviction/node-allocatable.ts";
import { admissionRefusal, DISK_PRESSURE_WAIT, podRequests, type AdmissionRefusal, type PodRequests } from "./admission.ts";
import { allocatedSpec } from "../pod-resize.ts";
import { osRefusal } from "./os-admission.ts";
import { sysctlRefusal } from "./sysctl-admission.ts";
import type { EventType } from "../../v1/kube-event.ts";
import type { PodSpec } from "../../manifest/types.ts";
import { isTerminalPhase, podPhase } from "../status/phase.ts";
import { allContainers, type PodRecord } from "../pod-state.ts";

/** What the node says about itself; the loop asks at each admission. */
export interface NodeConditions {
  diskPressure(): boolean;
}

export interface PodAdmissionOptions {
  /** Without it every pod fits. */
  allocatable?: NodeAllocatable;
  /** Without it the node is never under pressure. */
  node?: NodeConditions;
  /** The pods the loop holds, the candidate among them or not. */
  pods: () => Iterable<PodRecord>;
  event: (pod: PodRecord, type: EventType, reason: string, message: string) => void;
}

/**
 * What the kubelet's admit handlers refuse of a pod on its own, before the others are looked at, in
 * their order: the sysctl allowlist, then what of the predicate handler's no preemption could help
 * (the OS). The resources come after, beside the other pods.
 */
export function specRefusal(spec: PodSpec): AdmissionRefusal | undefined {
  return sysctlRefusal(spec) ?? osRefusal(spec);
}

export class PodAdmission {
  private readonly options: PodAdmissionOptions;

  constructor(options: PodAdmissionOptions) {
    this.options = options;
  }

  get underPressure(): boolean {
    return this.options.node?.diskPressure() ?? false;
  }

  /**
   * A pod the loop has not run before: it waits (waitingForNode), is refused (rejected), or is
   * admitted. `admitted` (from admittedNow, grown by each pod admitted) lets a pass admit a thousand
   * new pods without a thousand walks of every pod.
   */
  admitNew(pod: PodRecord, admitted?: PodRequests[]): void {
    if (this.underPressure) {
      pod.waitingForNode = { ...DISK_PRESSURE_WAIT };
      this.options.event(pod, "Warning", DISK_PRESSURE_WAIT.reason, DISK_PRESSURE_WAIT.message);
      return;
    }
    this.fit(pod, admitted);
  }

  /** The requests of the pods admitted so far, for admitNew. */
  admittedNow(): PodRequests[] {
    return this.admittedRequests(undefined);
  }

  /** Admits a waiting pod once nothing holds it back; true when it no longer waits. */
  release(pod: PodRecord): boolean {
    if (!pod.waitingForNode || this.underPressure) return false;
    pod.waitingForNode = undefined;
    this.fit(pod);
    return true;
  }

  /**
   * Whether the pod's spec, asking for new resources, fits beside the other pods' allocations (the
   * kubelet's canAdmitPod for a resize); the refusal when it does not.
   */
  resizeRefusal(pod: PodRecord): AdmissionRefusal | undefined {
    const { allocatable } = this.options;
    return allocatable && admissionRefusal(podRequests(pod.spec), this.admittedRequests(pod), allocatable);
  }

  /** The waiting pods, oldest first: the order they are admitted in once the pressure clears. */
  waiting(): PodRecord[] {
    return [...this.options.pods()].filter((pod) => pod.waitingForNode && pod.deletionRequestedAt === undefined).sort((a, b) => a.createdAt - b.createdAt);
  }

  private fit(pod: PodRecord, admitted?: PodRequests[]): void {
    const { allocatable } = this.options;
    const requests = podRequests(pod.spec);
    const refusal = specRefusal(pod.spec) ?? (allocatable && admissionRefusal(requests, admitted ?? this.admittedRequests(pod), allocatable));
    if (!refusal) {
      admitted?.push(requests);
      return;
    }
    pod.rejected = { reason: refusal.reason, message: `Pod was rejected: ${refusal.message}` };
    pod.phase = podPhase(pod);
    this.options.event(pod, "Warning", refusal.reason, refusal.message);
  }

  /** The kubelet's active pods other than `candidate`: admitted and not finished (a pod still stopping counts until it is gone). */
  private admittedRequests(candidate: PodRecord | undefined): PodRequests[] {
    const active = [...this.options.pods()].filter(
      (pod) => pod !== candidate && !pod.rejected && !pod.waitingForNode && (!isTerminalPhase(pod.phase) || allContainers(pod).some((c) => c.state === "running")),
    );
    // What they were allocated: a resize that waits has not taken what it asks for.
    return active.map((pod) => podRequests(allocatedSpec(pod)));
  }
}
