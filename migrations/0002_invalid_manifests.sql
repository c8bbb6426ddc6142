-- Manifest files the agent does not run because they do not parse or validate: `get pods` shows
-- each as STATUS Invalid, `describe` lists its problems. A row lives while its file is bad: it is
-- removed when the file is fixed or removed. The file's Warning events are in `events` under `uid`.
CREATE TABLE invalid_manifests (
  file TEXT PRIMARY KEY,              -- absolute path of the manifest
  uid TEXT NOT NULL,                  -- stable per node and file: the events' pod_uid
  namespace TEXT NOT NULL,            -- the pod's, if the file names a valid one; else default
  name TEXT NOT NULL,                 -- the pod's full name, if readable and valid; else the file's name
  reason TEXT NOT NULL,               -- FailedToParse (does not decode) or Invalid (not a valid Pod)
  issues_json TEXT NOT NULL,          -- [{"path": ["spec", "containers", 0, "image"], "message": "required"}, ...]
  object_json TEXT NOT NULL,          -- the v1 Pod `get` prints: phase Pending, reason Invalid
  first_seen_at INTEGER NOT NULL,     -- first found bad (kept while the file stays bad)
  updated_at INTEGER NOT NULL,
  revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX invalid_manifests_by_name ON invalid_manifests (namespace, name);
