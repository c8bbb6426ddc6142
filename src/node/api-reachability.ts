/**
 * What a writer toward the API server says about its failures: one line when the API server stops
 * answering and one when it answers again (never one per retry; writers that share one instance
 * say it once between them), and one line per verb and
 * resource the node is forbidden (a 403 is a missing permission, which retrying does not fix, but
 * which an administrator may grant meanwhile). Other refusals are logged each time they change.
 */
import { ClusterApiError, resourceOf } from "./cluster-client.ts";

export class ApiReachability {
  private unreachable = false;
  private readonly forbidden = new Set<string>();
  private lastRefusal = "";

  constructor(
    private readonly options: {
      log: (message: string) => void;
      /** What waits meanwhile, e.g. "pod statuses are queued and retried". */
      meanwhile: string;
    },
  ) {}

  succeeded(): void {
    if (!this.unreachable) return;
    this.unreachable = false;
    this.options.log("the API server answers again");
  }

  failed(error: ClusterApiError): void {
    if (error.unavailable) {
      if (this.unreachable) return;
      this.unreachable = true;
      this.options.log(`the API server does not answer (${error.message}); ${this.options.meanwhile}`);
      return;
    }
    const verbResource = `${error.request.method} ${resourceOf(error.request.path)}`;
    if (error.forbidden) {
      if (this.forbidden.has(verbResource)) return;
      this.forbidden.add(verbResource);
      this.options.log(`forbidden: the node may not ${verbResource} (${error.message}); retried with a back-off`);
      return;
    }
    const line = `${verbResource} refused: ${error.code} ${error.reason}: ${error.message}`;
    if (line === this.lastRefusal) return;
    this.lastRefusal = line;
    this.options.log(`${line}; retried with a back-off`);
  }
}
