-- Pods created through the API (issue 13): the second pod source, beside the manifest files. A row
-- is the Pod as it was accepted (defaults filled in, metadata.uid and creationTimestamp set by the
-- agent); the loop runs it like a file's pod and checkpoints its status in `pods` under the same
-- uid. The row lives until the pod is gone after a delete: then it is removed in the same way a
-- manifest file is. resource_version comes from the revision counter of pods, events and
-- invalid_manifests, so one number orders every write a watch can see.
CREATE TABLE api_pods (
  uid TEXT PRIMARY KEY,
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  object_json TEXT NOT NULL,          -- the v1 Pod as accepted: what the source admits again on every read
  resource_version INTEGER NOT NULL,  -- the revision of the last write to this row
  created_at INTEGER NOT NULL,        -- metadata.creationTimestamp, epoch ms
  deletion_requested_at INTEGER,      -- metadata.deletionTimestamp's request time: the pod is Terminating
  deletion_grace_seconds INTEGER      -- metadata.deletionGracePeriodSeconds: the grace its containers get
);
CREATE UNIQUE INDEX api_pods_by_name ON api_pods (namespace, name);
