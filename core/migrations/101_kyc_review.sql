-- Identity review in the back office: the rejection catalogue the customer reads (each reason
-- names what to redo), and a keyed hash of the document number so the reviewer sees the same
-- document on another account while the number itself stays encrypted.

ALTER TABLE verification_files DROP CONSTRAINT IF EXISTS verification_files_reject_reason_check;
UPDATE verification_files SET reject_reason = 'blurry' WHERE reject_reason = 'blurred';
UPDATE verification_files SET reject_reason = 'name_mismatch' WHERE reject_reason = 'mismatch';
ALTER TABLE verification_files ADD CONSTRAINT verification_files_reject_reason_check CHECK (
  reject_reason IN ('blurry', 'cropped', 'expired', 'name_mismatch', 'document_number_used', 'selfie_mismatch', 'wrong_type', 'other')
);

-- HMAC-SHA256 of the normalised number under a key derived from DOCUMENT_KEY (cipher.ts): equal
-- numbers meet in the index, and without the key the column says nothing. Submissions made
-- before this column have none until they are submitted again.
ALTER TABLE verifications ADD COLUMN number_hash bytea;
CREATE INDEX verifications_number_hash ON verifications (number_hash) WHERE number_hash IS NOT NULL;
