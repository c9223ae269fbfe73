-- Rates version (table of migration 007): bumped in the writing transaction whenever a rate or
-- a currency changes, whoever writes, so each core keeps the list of pairs until it moves.
CREATE OR REPLACE FUNCTION bump_rates_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE rates_version SET version = version + 1 WHERE id;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER rates_rates_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rates
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rates_version();

-- A pair is listed only while both of its currencies are enabled.
CREATE OR REPLACE TRIGGER currencies_rates_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON currencies
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rates_version();
