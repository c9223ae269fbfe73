-- The timed jobs of the cores (core/src/jobs): one row per job that runs on one core at a time.
-- A core claims a job by setting running_by (only when nobody holds it, or the holder's lease has
-- passed: a crashed core) and, for a scheduled run, only when the last run started at least one
-- interval ago, so N cores on one database run a job about once per interval, not N times. The
-- claim and the release are single committed statements: nothing stays open while the job runs.
CREATE TABLE job_runs (
  name text PRIMARY KEY,
  -- The core running it now (a random id per process), NULL between runs.
  running_by text,
  lease_until timestamptz,
  -- The last run: when it started, how long it took, and its failure (NULL: it succeeded).
  started_at timestamptz,
  finished_at timestamptz,
  duration_ms integer,
  error text
);
