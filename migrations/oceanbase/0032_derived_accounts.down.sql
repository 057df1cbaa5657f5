-- Migration 0032 down: the table of the derived accounts (the accounts themselves stay; drop
-- them with DROP USER, see README "Database accounts").
DROP TABLE pc_aps_derived_accounts;
