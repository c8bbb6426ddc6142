-- Namespaces created through the API (issue 23). The namespaces that hold a pod, and default,
-- kube-system, kube-public and kube-node-lease, exist without a row (a manifest file's pod still
-- makes its namespace, as a static pod does); a row is a namespace `kubectl create namespace` made,
-- or one being deleted. A delete marks the row Terminating (deletion_requested_at) and deletes its
-- API pods; once the last of them is gone the row is marked deleted in the same transaction, and
-- kept (one row per name, revived by the next create of the name) so a watch from before the
-- deletion still sees DELETED. revision comes from the counter of pods, events and api_pods.
CREATE TABLE namespaces (
  name TEXT PRIMARY KEY,
  uid TEXT NOT NULL,
  object_json TEXT NOT NULL,          -- metadata (labels, annotations) and spec as accepted; the rest is the row's
  created_at INTEGER NOT NULL,        -- metadata.creationTimestamp, epoch ms
  deletion_requested_at INTEGER,      -- metadata.deletionTimestamp: Terminating until its API pods are gone
  deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
  revision INTEGER NOT NULL,          -- the revision of the row's last write
  created_revision INTEGER NOT NULL   -- the revision that created (or revived) it: ADDED for a watch behind it
);
CREATE INDEX namespaces_by_revision ON namespaces (revision);
