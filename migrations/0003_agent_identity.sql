-- The database's identity: a random id made once, when this migration runs. The agent puts it on
-- every container and sandbox it creates (label io.minikubelet.database) and adopts or removes only
-- what carries it, so two agents with different databases never take each other's containers.
CREATE TABLE agent_identity (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
INSERT INTO agent_identity (singleton, id, created_at)
VALUES (1, lower(hex(randomblob(16))), CAST(strftime('%s', 'now') AS INTEGER) * 1000);
