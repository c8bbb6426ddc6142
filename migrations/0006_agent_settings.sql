-- The restart back-off the agent last ran with (--backoff-base, --backoff-max). Commands that read
-- the database after the fact (triage) need the cap to say when a back-off resets; without this
-- they could only assume the kubelet's default.
CREATE TABLE agent_backoff (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  base_ms INTEGER NOT NULL,
  cap_ms INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL
);
