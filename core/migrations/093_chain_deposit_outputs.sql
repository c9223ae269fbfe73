-- A chain deposit is one output of a transaction, not the transaction: one transaction may pay
-- several of our addresses. Deposits seen before were each the transaction's only output (0).
UPDATE payments SET external_id = external_id || ':0'
  WHERE direction = 'deposit' AND address IS NOT NULL AND external_id IS NOT NULL AND external_id NOT LIKE '%:%';
