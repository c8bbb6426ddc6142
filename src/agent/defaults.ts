/**
 * The defaults of the agent's own flags, in a module with no imports: `--help` prints them and the
 * agent applies them, without the command line loading the agent.
 */

/** How often the file source rescans its directory in full (the directory watch does the rest). */
export const DEFAULT_RESYNC_SECONDS = 20;

/** Where `run` serves the kubelet's own endpoints without `--kubelet-listen`: the kubelet's port, on loopback. */
export const DEFAULT_KUBELET_LISTEN = "127.0.0.1:10250";
