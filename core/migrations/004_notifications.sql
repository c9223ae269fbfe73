-- Notifications (spec §3, §4) and the content version that the BFF's page cache polls.

-- One row per notification: for one user (user_id) or for everyone (user_id NULL).
CREATE TABLE notifications (
  id bigserial PRIMARY KEY,
  user_id bigint REFERENCES users (id) ON DELETE CASCADE,
  display text NOT NULL CHECK (display IN ('inner', 'modal')),
  type text NOT NULL CHECK (type IN ('danger', 'success', 'secondary')),
  closable boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- NULL: shown until closed (or deleted by an operator).
  expires_at timestamptz,
  CHECK (expires_at IS NULL OR expires_at > created_at)
);
CREATE INDEX notifications_user ON notifications (user_id, id) WHERE user_id IS NOT NULL;
CREATE INDEX notifications_global ON notifications (id) WHERE user_id IS NULL;
CREATE INDEX notifications_global_expiry ON notifications (expires_at) WHERE user_id IS NULL AND expires_at IS NOT NULL;

-- The words, per locale. A viewer gets their locale's text, else the default locale's (ru),
-- else any: a notification written in one language still reaches everyone.
-- text_html and buttons are stored already sanitised and validated (core/src/lib/sanitize.ts).
CREATE TABLE notification_texts (
  notification_id bigint NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
  locale text NOT NULL CHECK (locale IN ('ru', 'en')),
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  text_html text NOT NULL,
  buttons jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(buttons) = 'array'),
  PRIMARY KEY (notification_id, locale)
);

-- Closed by whom: a notification for everyone closed by one user stays open for the others.
CREATE TABLE notification_closes (
  user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  notification_id bigint NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
  closed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, notification_id)
);
CREATE INDEX notification_closes_notification ON notification_closes (notification_id);

-- Content version: one counter, bumped by triggers in the same transaction as any change to
-- what a signed-out page shows (articles, menus, footer images, site settings, notifications
-- for everyone), whoever writes it (API, operator command, seed, plain SQL).
CREATE TABLE content_version (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  version bigint NOT NULL DEFAULT 1,
  changed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO content_version DEFAULT VALUES;

CREATE FUNCTION bump_content_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE content_version SET version = version + 1, changed_at = now() WHERE id;
  RETURN NULL;
END
$$;

CREATE TRIGGER articles_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON articles
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();
CREATE TRIGGER menu_items_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON menu_items
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();
CREATE TRIGGER footer_images_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON footer_images
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();
CREATE TRIGGER site_settings_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON site_settings
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();
-- A user's own notifications never reach a cached (signed-out) page: only global ones count.
CREATE TRIGGER notifications_content_version_new AFTER INSERT OR UPDATE ON notifications
  FOR EACH ROW WHEN (NEW.user_id IS NULL) EXECUTE FUNCTION bump_content_version();
CREATE TRIGGER notifications_content_version_old AFTER UPDATE OR DELETE ON notifications
  FOR EACH ROW WHEN (OLD.user_id IS NULL) EXECUTE FUNCTION bump_content_version();
