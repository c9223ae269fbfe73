-- Footer logos uploaded from /ops/config/footer: the re-encoded picture in storage (file_key,
-- never shown) and the name it is served under to everyone, GET /api/site/logos/{file_id}: a
-- fresh id per upload, so its answer is cached for good. NULL: a file of the site itself
-- (site/public/image/footer_logos/{name}.{ext}, what `footer:set` registers).
ALTER TABLE footer_images
  ADD COLUMN file_key text,
  ADD COLUMN file_id text UNIQUE CHECK (file_id ~ '^[0-9a-f-]{36}\.(png|webp|jpg)$'),
  ADD CHECK ((file_key IS NULL) = (file_id IS NULL));
