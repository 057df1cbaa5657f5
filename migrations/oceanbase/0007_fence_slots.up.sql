-- Migration 0007 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): fence slots remove the single
-- lease-row hotspot of fenced commits without weakening fencing.
--
-- Before: every business or control transaction locked THE lease row of its supervisor key
-- FOR UPDATE until commit, so all workers of a supervisor committed one at a time (measured on
-- MariaDB 10.11, 8 workers: fenced commits at 44 % of unfenced, bench `fence`).
-- After: each supervisor key has 32 fence rows (pc_artifact_processing_lease_fences), copies of
-- the term (holder, generation, expiry). pc_aps_assert_term locks only the slot of its connection
-- (CONNECTION_ID() MOD 32). Every term change (acquire/takeover, renewal, invalidation) updates
-- the lease row AND all 32 fence rows in the same transaction, so it waits for every in-flight
-- fenced transaction, and no fenced transaction can pass with the old term after it commits:
-- the same guarantee as the single row, with 32-way concurrency between terms changes.
-- A missing fence row reads as term_lost (fail safe).
-- Irreversible by design (no down file): the previous procedure versions are not kept.
CREATE TABLE pc_artifact_processing_fence_slots (
  fence_slot SMALLINT NOT NULL PRIMARY KEY
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO pc_artifact_processing_fence_slots (fence_slot) VALUES
  (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15),
  (16), (17), (18), (19), (20), (21), (22), (23), (24), (25), (26), (27), (28), (29), (30), (31);

CREATE TABLE pc_artifact_processing_lease_fences (
  supervisor_key        VARCHAR(191) NOT NULL,
  fence_slot            SMALLINT     NOT NULL,
  holder_id             VARCHAR(128) NULL,
  supervisor_generation BIGINT       NOT NULL DEFAULT 0,
  expires_at            DATETIME(3)  NULL,
  PRIMARY KEY (supervisor_key, fence_slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Existing terms get their fence rows.
INSERT INTO pc_artifact_processing_lease_fences (supervisor_key, fence_slot, holder_id, supervisor_generation, expires_at)
SELECT l.supervisor_key, s.fence_slot, l.holder_id, l.supervisor_generation, l.expires_at
  FROM pc_artifact_processing_leases l CROSS JOIN pc_artifact_processing_fence_slots s;

-- @procedure pc_aps_assert_term
-- @procedure pc_aps_acquire_term
-- @procedure pc_aps_renew_term
-- @procedure pc_aps_invalidate_term
