-- What an API watch needs (issue 12). created_revision tells a watcher whether a row it has not
-- seen is new since its resourceVersion (ADDED) or changed (MODIFIED); it is the revision that
-- inserted the row (or revived a deleted pod's uid). compaction holds the highest revision that
-- retention deleted: a watch from an older resourceVersion may have missed it and gets 410 Expired.
ALTER TABLE pods ADD COLUMN created_revision INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN created_revision INTEGER NOT NULL DEFAULT 0;
CREATE TABLE compaction (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  revision INTEGER NOT NULL
);
-- Retention may already have deleted rows whose revisions nobody recorded: history starts now.
INSERT INTO compaction (singleton, revision)
SELECT 1, coalesce(max(revision), 0) FROM (SELECT max(revision) AS revision FROM pods UNION ALL SELECT max(revision) FROM events UNION ALL SELECT max(revision) FROM invalid_manifests);
