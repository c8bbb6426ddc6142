/** Where `run` and `serve` serve the API without `--api-listen`: the API server's port, on loopback. */
export const DEFAULT_API_LISTEN = "127.0.0.1:6443";
