-- Currency names in the reader's language (issue 12): one name per locale, shown in the page's
-- language; `name` stays as the fallback for a locale without one. An object of locale → name.
ALTER TABLE currencies ADD COLUMN names jsonb NOT NULL DEFAULT '{}'::jsonb
  CHECK (jsonb_typeof(names) = 'object');

-- The seeded currencies of databases created before this migration (core/src/seed/demo.ts seeds
-- new ones with their names); an operator's own currencies keep their single name until given more.
UPDATE currencies AS c SET names = v.names
FROM (VALUES
  ('RUB', '{"ru": "Российский рубль", "en": "Russian rouble"}'::jsonb),
  ('USD', '{"ru": "Доллар США", "en": "US dollar"}'::jsonb),
  ('EUR', '{"ru": "Евро", "en": "Euro"}'::jsonb),
  ('KZT', '{"ru": "Казахстанский тенге", "en": "Kazakhstani tenge"}'::jsonb),
  ('UAH', '{"ru": "Украинская гривна", "en": "Ukrainian hryvnia"}'::jsonb),
  ('BTC', '{"ru": "Биткоин", "en": "Bitcoin"}'::jsonb),
  ('ETH', '{"ru": "Эфириум", "en": "Ethereum"}'::jsonb),
  ('USDT', '{"ru": "Tether", "en": "Tether"}'::jsonb),
  ('USDC', '{"ru": "USD Coin", "en": "USD Coin"}'::jsonb),
  ('TON', '{"ru": "Тонкоин", "en": "Toncoin"}'::jsonb),
  ('LTC', '{"ru": "Лайткоин", "en": "Litecoin"}'::jsonb),
  ('TRX', '{"ru": "TRON", "en": "TRON"}'::jsonb)
) AS v(code, names)
WHERE c.code = v.code AND c.names = '{}'::jsonb;
