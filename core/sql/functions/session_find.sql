-- The live session of a token hash and its user (auth/sessions.ts findSession), in plpgsql so
-- that its plan is made once per database session rather than once per request. p_renew_after: seconds since last_seen_at after which the session is renewed.
-- second_factor: 2FA is on (TOTP or a passkey), so a transfer knows whether to ask for it without a query of its own.
CREATE OR REPLACE FUNCTION session_find(p_token_hash bytea, p_renew_after integer)
RETURNS TABLE (
  session_id text, renew boolean, id text, account_id integer, email text, locale text,
  need_set_password boolean, email_confirmed boolean, has_password boolean, second_factor boolean
) LANGUAGE plpgsql STABLE
  SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
    SELECT s.id::text, (s.last_seen_at < now() - p_renew_after * interval '1 second'),
           u.id::text, u.account_id, u.email, u.locale, u.need_set_password,
           (u.email_confirmed_at IS NOT NULL), (u.password_hash IS NOT NULL),
           (EXISTS (SELECT 1 FROM user_totp t WHERE t.user_id = u.id AND t.enabled_at IS NOT NULL)
             OR EXISTS (SELECT 1 FROM user_passkeys k WHERE k.user_id = u.id))
    FROM sessions s JOIN users u ON u.id = s.user_id
    WHERE s.token_hash = p_token_hash AND s.revoked_at IS NULL AND s.expires_at > now();
END $$;
