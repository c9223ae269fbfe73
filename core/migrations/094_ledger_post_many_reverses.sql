-- ledger_post_many takes the reversed transaction of each (p_reverses), so ledger_post can be
-- one transaction of it (core/sql/functions/ledger_post_many.sql). A new argument is a new
-- signature, which CREATE OR REPLACE would add beside the old one: the old one goes here.
DROP FUNCTION IF EXISTS ledger_post_many(text, integer[], bigint[], numeric[], text[], text[]);
