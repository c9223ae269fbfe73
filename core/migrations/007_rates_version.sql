-- The list of pairs (GET /api/exchange/list: the home page, /exchanges, every pair page) is the
-- same for everyone until a rate or a currency changes, which happens by an operator's command or
-- the price feed, not per request. Reading its 132 rows cost PGlite about 3 ms of CPU per page.
-- A counter bumped by triggers in the writing transaction, whoever writes (API, operator command,
-- feed, seed, plain SQL), lets each core keep the list and read one number per request instead.
CREATE TABLE rates_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL DEFAULT 1
);
INSERT INTO rates_version DEFAULT VALUES;

CREATE FUNCTION bump_rates_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE rates_version SET version = version + 1 WHERE id;
  RETURN NULL;
END
$$;

CREATE TRIGGER rates_rates_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rates
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rates_version();
-- A pair is listed only while both of its currencies are enabled.
CREATE TRIGGER currencies_rates_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON currencies
  FOR EACH STATEMENT EXECUTE FUNCTION bump_rates_version();
