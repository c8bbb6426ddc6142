-- The node as the agent last set it up and saw it: how allocatable was carved out of capacity
-- (--eviction-hard, --system-reserved, --kube-reserved, in the flags' own syntax) and the
-- DiskPressure condition the agent decided, with when it last changed. The API's Node object
-- (under `run` and `serve`) reports these instead of guessing the agent's flags.
CREATE TABLE node_status (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  eviction_hard TEXT NOT NULL,
  system_reserved TEXT NOT NULL,
  kube_reserved TEXT NOT NULL,
  disk_pressure INTEGER NOT NULL CHECK (disk_pressure IN (0, 1)),
  disk_pressure_since INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL
);
