-- Migration 0040 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): pc_task_read_capacity, the
-- read of the durable tasks' claim cap and its running count for the web console (issue 44).
-- Numbered 0040 to leave room for the migrations being added beside it.

-- @procedure pc_task_read_capacity sha256=9a06f6b0a8e83e882bf7468454ef2b68c384d72c3c4b977dda5ea1ac3f68d4ae
