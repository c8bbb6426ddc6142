-- The namespaced objects created through the API that pods only reference (issue 37): ConfigMaps,
-- Secrets and ServiceAccounts, one table for all, keyed by resource, namespace and name. object_json
-- is the object as stored (metadata without resourceVersion, which is the row's revision). A delete
-- marks the row deleted and keeps it (one row per name, revived by the next create of the name), so
-- a watch from before the deletion still sees DELETED. revision comes from the counter of pods,
-- events, api_pods and namespaces. The database file is the agent's 0600 state: a Secret's values
-- are stored here as the API server stores them in etcd, and nowhere else.
CREATE TABLE api_objects (
  resource TEXT NOT NULL,             -- configmaps, secrets, serviceaccounts
  namespace TEXT NOT NULL,
  name TEXT NOT NULL,
  uid TEXT NOT NULL,
  object_json TEXT NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)),
  revision INTEGER NOT NULL,          -- the revision of the row's last write
  created_revision INTEGER NOT NULL,  -- the revision that created (or revived) it: ADDED for a watch behind it
  PRIMARY KEY (resource, namespace, name)
);
CREATE INDEX api_objects_by_revision ON api_objects (resource, revision);
