-- Site platform: settings, content, currencies.

CREATE TABLE site_settings (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE menu_items (
  id bigserial PRIMARY KEY,
  locale text NOT NULL CHECK (locale IN ('ru', 'en')),
  menu text NOT NULL CHECK (menu IN ('header_menu', 'footer_menu', 'main_menu')),
  url text NOT NULL,
  title text NOT NULL,
  position integer NOT NULL DEFAULT 0,
  icon_url text,
  UNIQUE (locale, menu, url)
);

CREATE TABLE articles (
  name text NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
  locale text NOT NULL CHECK (locale IN ('ru', 'en')),
  title text NOT NULL,
  body_html text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (name, locale)
);

CREATE TABLE footer_images (
  name text PRIMARY KEY CHECK (name ~ '^[a-z0-9_-]{1,64}$'),
  ext text NOT NULL CHECK (ext IN ('svg', 'png', 'webp', 'jpg')),
  url text,
  position integer NOT NULL DEFAULT 0
);

CREATE TABLE currencies (
  code text PRIMARY KEY CHECK (code ~ '^[A-Z0-9]{2,10}$'),
  kind text NOT NULL CHECK (kind IN ('fiat', 'crypto')),
  precision smallint NOT NULL CHECK (precision BETWEEN 0 AND 18),
  name text NOT NULL,
  logo text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  position integer NOT NULL DEFAULT 0
);
