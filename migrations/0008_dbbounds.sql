-- What bounds the database (issue 14), and why an attempt ended.
--
-- event_counts: how many events each pod (uid) has, kept by triggers so the per-pod cap is checked
-- with one primary-key read when an event row is inserted, never with a count over the events.
CREATE TABLE event_counts (
  pod_uid TEXT PRIMARY KEY,
  events INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO event_counts (pod_uid, events) SELECT pod_uid, count(*) FROM events GROUP BY pod_uid;
CREATE TRIGGER events_counted AFTER INSERT ON events BEGIN
  INSERT INTO event_counts (pod_uid, events) VALUES (NEW.pod_uid, 1)
  ON CONFLICT (pod_uid) DO UPDATE SET events = events + 1;
END;
CREATE TRIGGER events_uncounted AFTER DELETE ON events BEGIN
  UPDATE event_counts SET events = events - 1 WHERE pod_uid = OLD.pod_uid;
  DELETE FROM event_counts WHERE pod_uid = OLD.pod_uid AND events <= 0;
END;

-- A container keeps its newest 100 attempts: a crash loop adds one row per restart (about 300 a
-- day at the 5-minute back-off cap, far more with a short --backoff-max), for as long as the pod
-- lives. The older rows go when a newer one is inserted, by the primary key's range.
CREATE TRIGGER attempts_capped AFTER INSERT ON attempts WHEN NEW.attempt >= 100 BEGIN
  DELETE FROM attempts WHERE pod_uid = NEW.pod_uid AND container = NEW.container AND attempt <= NEW.attempt - 100;
END;

-- A pod row pruned by retention takes its attempts and back-off with it (containers go by their
-- foreign key); before this, the attempts of long-gone pods stayed for good.
CREATE TRIGGER pods_pruned AFTER DELETE ON pods BEGIN
  DELETE FROM attempts WHERE pod_uid = OLD.uid;
  DELETE FROM backoff WHERE pod_uid = OLD.uid;
END;
DELETE FROM attempts WHERE pod_uid NOT IN (SELECT uid FROM pods);
DELETE FROM attempts WHERE EXISTS (
  SELECT 1 FROM attempts AS newer
  WHERE newer.pod_uid = attempts.pod_uid AND newer.container = attempts.container AND newer.attempt >= attempts.attempt + 100);

-- Why the attempt ended, beside the reason Kubernetes shows (reason keeps the kubelet's value:
-- OOMKilled, Error, Completed ...). kill_cause: oom (the kernel, at the memory limit), liveness or
-- startup (a failed probe), or what else made the agent stop it: removed, replaced, shutdown,
-- completed (a sidecar after the pod's main containers), changed (an in-place update); NULL when
-- it ended on its own. grace_expired: 1 when the agent had to send SIGKILL after the grace period.
ALTER TABLE attempts ADD COLUMN kill_cause TEXT;
ALTER TABLE attempts ADD COLUMN grace_expired INTEGER NOT NULL DEFAULT 0;
