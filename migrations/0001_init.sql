-- minikubelet state, version 1. Times are epoch milliseconds; booleans are 0/1; JSON columns hold
-- the loop's own data (record_json: the PodRecord, for adoption after a restart) or what the API
-- would serve (object_json: the v1 Pod that `get` and `describe` print).

-- One row per pod incarnation (uid). A replaced pod keeps its old row, marked deleted.
CREATE TABLE pods (
  uid TEXT PRIMARY KEY,
  pod_key TEXT NOT NULL,              -- namespace/name
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,                 -- the full name (NAME-NODE with --node)
  config_hash TEXT NOT NULL,
  source TEXT NOT NULL,               -- the manifest file
  spec_json TEXT NOT NULL,            -- the manifest as written
  created_at INTEGER NOT NULL,
  deletion_requested_at INTEGER,      -- the pod is stopping (Terminating)
  deleted_at INTEGER,                 -- the pod is gone; NULL while it is live
  phase TEXT NOT NULL,
  record_json TEXT NOT NULL,
  object_json TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  revision INTEGER NOT NULL           -- raised when the v1 object changes: what `get -w` polls
);
CREATE INDEX pods_live_by_name ON pods (namespace, name) WHERE deleted_at IS NULL;
CREATE INDEX pods_by_name ON pods (name, deleted_at);
CREATE INDEX pods_by_revision ON pods (revision);
CREATE INDEX pods_deleted ON pods (deleted_at) WHERE deleted_at IS NOT NULL;

-- The current state of each container of a pod, as of the last pass.
CREATE TABLE containers (
  pod_uid TEXT NOT NULL REFERENCES pods (uid) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,                 -- init, sidecar, app
  position INTEGER NOT NULL,
  state TEXT NOT NULL,                -- waiting, running, terminated
  reason TEXT,                        -- waiting or terminated reason
  container_id TEXT,
  restart_count INTEGER NOT NULL,
  ready INTEGER NOT NULL,
  started INTEGER NOT NULL,
  started_at INTEGER,
  PRIMARY KEY (pod_uid, name)
) WITHOUT ROWID;

-- One row per start of a container: what the API forgets after one restart.
CREATE TABLE attempts (
  pod_uid TEXT NOT NULL,
  container TEXT NOT NULL,
  attempt INTEGER NOT NULL,           -- 0 for the first start, then the restart count
  runtime_id TEXT NOT NULL,           -- empty when the start itself failed
  started_at INTEGER,
  finished_at INTEGER,
  exit_code INTEGER,
  reason TEXT,                        -- Completed, Error, OOMKilled, StartError ...
  signal INTEGER,
  log_path TEXT,                      -- the runtime's log file, when it keeps one
  PRIMARY KEY (pod_uid, container, attempt)
) WITHOUT ROWID;
CREATE INDEX attempts_by_finish ON attempts (finished_at);

-- Restart back-off per (pod uid, container): survives an agent restart.
CREATE TABLE backoff (
  key TEXT PRIMARY KEY,               -- podUid/container
  pod_uid TEXT NOT NULL,
  delay_ms INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX backoff_by_pod ON backoff (pod_uid);

-- Events with the API server's repeat counting: the same (pod, container, type, reason, message)
-- raises count and last_at instead of adding a row.
CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  pod_uid TEXT NOT NULL,
  pod_key TEXT NOT NULL,
  namespace TEXT NOT NULL,
  pod TEXT NOT NULL,
  container TEXT NOT NULL,            -- empty for pod-level events
  type TEXT NOT NULL,                 -- Normal, Warning
  reason TEXT NOT NULL,
  message TEXT NOT NULL,
  count INTEGER NOT NULL,
  first_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  revision INTEGER NOT NULL           -- raised on every insert or repeat: what `events -w` polls
);
CREATE UNIQUE INDEX events_identity ON events (pod_uid, container, type, reason, message);
CREATE INDEX events_by_pod ON events (pod_uid, last_at);
CREATE INDEX events_by_name ON events (pod, last_at);
CREATE INDEX events_by_time ON events (last_at);
CREATE INDEX events_by_revision ON events (revision);
