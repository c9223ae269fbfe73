-- A sign-in or confirmation link belongs to the browser that asked for it: sha256 of the
-- binding the BFF keeps in that browser's link_binding cookie. A link opened without it is
-- spent only after the person confirms the account (NULL: links made before this, likewise).
ALTER TABLE auth_tokens ADD COLUMN binding_hash bytea;
