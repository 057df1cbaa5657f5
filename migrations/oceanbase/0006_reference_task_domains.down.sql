-- Down of 0006: drops the reference task domain tables.
DROP TABLE IF EXISTS ref_datasets;
DROP TABLE IF EXISTS ref_files;
