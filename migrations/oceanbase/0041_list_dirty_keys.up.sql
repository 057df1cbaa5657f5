-- Migration 0041 (OceanBase MySQL mode / MySQL 8 / MariaDB 10.11): pc_aps_list_dirty_keys, a
-- keyset page of the keys with ordinary work of one binding, for the web console (issue 44).

-- @procedure pc_aps_list_dirty_keys sha256=929b725250f0c98d2c6fb0dcdf3144d002b4840010b1c08802762bccd7c1276c
