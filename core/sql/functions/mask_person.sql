-- "Иван П." when the user gave a first name, else the email masked: "de***@o***.local".
CREATE OR REPLACE FUNCTION mask_person(p_first text, p_last text, p_email text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
    WHEN coalesce(btrim(p_first), '') <> '' THEN
      btrim(p_first) || CASE WHEN coalesce(btrim(p_last), '') <> '' THEN ' ' || upper(left(btrim(p_last), 1)) || '.' ELSE '' END
    ELSE
      left(split_part(p_email, '@', 1), 2) || '***@' || left(split_part(p_email, '@', 2), 1) || '***'
        || coalesce(substring(split_part(p_email, '@', 2) from '\.[^.]+$'), '')
  END
$$;
