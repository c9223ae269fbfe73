-- Content version (table of migration 004): bumped in the same transaction as any change to
-- what a signed-out page shows (articles, menus, footer images, site settings, notifications
-- for everyone), whoever writes it (API, operator command, seed, plain SQL).
CREATE OR REPLACE FUNCTION bump_content_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE content_version SET version = version + 1, changed_at = now() WHERE id;
  RETURN NULL;
END
$$;

CREATE OR REPLACE TRIGGER articles_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON articles
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();

CREATE OR REPLACE TRIGGER menu_items_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON menu_items
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();

CREATE OR REPLACE TRIGGER footer_images_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON footer_images
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();

CREATE OR REPLACE TRIGGER site_settings_content_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON site_settings
  FOR EACH STATEMENT EXECUTE FUNCTION bump_content_version();

-- A user's own notifications never reach a cached (signed-out) page: only global ones count.
CREATE OR REPLACE TRIGGER notifications_content_version_new AFTER INSERT OR UPDATE ON notifications
  FOR EACH ROW WHEN (NEW.user_id IS NULL) EXECUTE FUNCTION bump_content_version();

CREATE OR REPLACE TRIGGER notifications_content_version_old AFTER UPDATE OR DELETE ON notifications
  FOR EACH ROW WHEN (OLD.user_id IS NULL) EXECUTE FUNCTION bump_content_version();
