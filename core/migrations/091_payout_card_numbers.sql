-- Payout card numbers at rest, as document numbers and issued cards: AES-256-GCM sealed with
-- DOCUMENT_KEY (iv ‖ tag ‖ ciphertext). A new withdrawal keeps its card number only here, never
-- in `details`; the rows written before are sealed by the core at start (sealPayoutCardNumbers,
-- withdrawals.ts: the key is not the database's), which then removes the number from `details`.
ALTER TABLE withdrawals ADD COLUMN card_number_sealed bytea;

-- The sandbox providers' book keeps what the user sees (the withdrawal's masked details), and
-- whether the payout goes to the sandbox's declined test card, decided when it is handed over.
ALTER TABLE sandbox_payouts ADD COLUMN declined boolean NOT NULL DEFAULT false;
UPDATE sandbox_payouts p SET declined = p.destination = '4000000000000002', destination = w.details_shown
FROM withdrawals w WHERE w.public_id::text = p.reference;
UPDATE sandbox_payouts SET declined = destination = '4000000000000002', destination = '•••• ' || right(destination, 4)
WHERE destination ~ '^[0-9]{12,19}$';
