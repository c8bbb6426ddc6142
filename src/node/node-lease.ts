/**
 * The node's heartbeat: its Lease in kube-node-lease, renewed every 10 s, by the rules of
 * component-helpers' lease controller as the kubelet runs it (pkg/kubelet/kubelet.go,
 * apimachinery/lease/controller.go): renew from the last Lease the API server returned; when that
 * fails, get the Lease (creating it when missing, owned by the Node as the kubelet's
 * SetNodeOwnerFunc makes it) with a back-off doubling from 100 ms to 7 s, then renew; a Conflict
 * re-gets and retries, at most 5 updates a round. kube-controller-manager's node-lifecycle
 * controller reads renewTime: a Lease not renewed within its grace marks the Node Unknown.
 */
import type { Clock } from "../clock.ts";
import { cappedDoubling } from "../capped-doubling.ts";
import { microTime } from "../v1/time.ts";
import type { ApiReachability } from "./api-reachability.ts";
import { ClusterApiError, type ClusterApi } from "./cluster-client.ts";

/** The kubelet's nodeLeaseDurationSeconds default. */
export const LEASE_DURATION_SECONDS = 40;
/** nodeLeaseRenewIntervalFraction (0.25) of the duration. */
export const LEASE_RENEW_INTERVAL_MS = LEASE_DURATION_SECONDS * 1000 * 0.25;
export const LEASE_NAMESPACE = "kube-node-lease";
const MAX_UPDATE_RETRIES = 5;
const ENSURE_BACKOFF_START_MS = 100;
const ENSURE_BACKOFF_CAP_MS = 7_000;

export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace: string; resourceVersion?: string; ownerReferences?: Record<string, unknown>[]; [key: string]: unknown };
  spec: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; [key: string]: unknown };
}

export interface NodeLeaseOptions {
  client: ClusterApi;
  clock: Clock;
  nodeName: string;
  /** The Node's uid: the Lease's owner, so the garbage collector removes it with the Node. */
  nodeUid: string;
  reachability: ApiReachability;
  /** Aborts the request under way when the node stops (an API server that does not answer must not hold the agent's exit). */
  signal?: AbortSignal;
}

export class NodeLease {
  private latest: Lease | undefined;
  private stopped = false;
  private cancelTimer: (() => void) | undefined;
  private running: Promise<void> | undefined;
  /** Ends the back-off wait under way (stop). */
  private wake: (() => void) | undefined;

  constructor(private readonly options: NodeLeaseOptions) {}

  private get path(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases/${this.options.nodeName}`;
  }

  /** Renews now, then every LEASE_RENEW_INTERVAL_MS after each round ends (as JitterUntil, sliding). */
  start(): void {
    const round = () => {
      if (this.stopped) return;
      this.running = this.sync().finally(() => {
        this.running = undefined;
        if (!this.stopped) this.cancelTimer = this.options.clock.setTimeout(round, LEASE_RENEW_INTERVAL_MS);
      });
    };
    round();
  }

  /** Stops renewing; a round under way ends at its next wait. The Lease stays, as the kubelet leaves it. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.wake?.();
    await this.running;
  }

  /** One round of the lease controller's sync: resolves once renewed, or once stopped. */
  async sync(): Promise<void> {
    if (this.latest && (await this.retryUpdate(this.latest))) return;
    const ensured = await this.backoffEnsure();
    if (!ensured) return;
    this.latest = ensured.lease;
    if (!ensured.created) await this.retryUpdate(ensured.lease);
  }

  /** The Lease as last returned by the API server. */
  get lease(): Lease | undefined {
    return this.latest;
  }

  private async retryUpdate(base: Lease): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_UPDATE_RETRIES && !this.stopped; attempt++) {
      try {
        this.latest = await this.call("PUT leases", { method: "PUT", path: this.path, body: this.renewed(base) });
        return true;
      } catch (error) {
        if (!(error instanceof ClusterApiError && error.conflict)) continue;
        const ensured = await this.backoffEnsure();
        if (!ensured) return false;
        base = ensured.lease;
      }
    }
    return false;
  }

  /** Gets the Lease (creating it when missing), waiting a doubling back-off between failures; undefined once stopped. */
  private async backoffEnsure(): Promise<{ lease: Lease; created: boolean } | undefined> {
    for (let failures = 1; !this.stopped; failures++) {
      try {
        return await this.ensure();
      } catch {
        await new Promise<void>((resolve) => {
          const cancel = this.options.clock.setTimeout(resolve, cappedDoubling(ENSURE_BACKOFF_START_MS, ENSURE_BACKOFF_CAP_MS, failures));
          this.wake = () => {
            cancel();
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
    return undefined;
  }

  private async ensure(): Promise<{ lease: Lease; created: boolean }> {
    try {
      return { lease: await this.call("GET leases", { method: "GET", path: this.path }, (error) => error.notFound), created: false };
    } catch (error) {
      if (!(error instanceof ClusterApiError && error.notFound)) throw error;
    }
    const { nodeName } = this.options;
    const fresh: Lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: nodeName, namespace: LEASE_NAMESPACE }, spec: { holderIdentity: nodeName } };
    const created = await this.call<Lease>("POST leases", { method: "POST", path: `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`, body: this.renewed(fresh) });
    return { lease: created, created: true };
  }

  /** newLease: the base with the duration and renewTime set, and the Node as owner when it has none. */
  private renewed(base: Lease): Lease {
    const { clock, nodeName, nodeUid } = this.options;
    const lease = structuredClone(base);
    lease.spec.leaseDurationSeconds = LEASE_DURATION_SECONDS;
    lease.spec.renewTime = microTime(clock.now());
    if (!lease.metadata.ownerReferences?.length) lease.metadata.ownerReferences = [{ apiVersion: "v1", kind: "Node", name: nodeName, uid: nodeUid }];
    return lease;
  }

  /** A request, its outcome told to the reachability report; `expected` answers (a missing Lease) count as answers, not failures. */
  private async call<T = Lease>(label: string, request: Parameters<ClusterApi["request"]>[0], expected?: (error: ClusterApiError) => boolean): Promise<T> {
    try {
      const answer = await this.options.client.request<T>({ ...request, signal: this.options.signal });
      this.options.reachability.succeeded(label);
      return answer;
    } catch (error) {
      if (error instanceof ClusterApiError && expected?.(error)) this.options.reachability.succeeded(label);
      else this.options.reachability.failed(label, error);
      throw error;
    }
  }
}
