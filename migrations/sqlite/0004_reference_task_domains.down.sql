-- Down of 0004: drops the reference task domain tables.
DROP TABLE IF EXISTS ref_datasets;
DROP TABLE IF EXISTS ref_files;
