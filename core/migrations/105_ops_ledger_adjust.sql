-- Money moved by operators: a credit or debit of a customer's wallet and the reversal of a ledger
-- transaction are four-eyes requests (ops_requests) under `ledger.adjust`, proposed by one finance
-- operator and approved by another. Not granted to admin: whoever manages operators' roles does
-- not also move money (a role change is itself a four-eyes request).
INSERT INTO ops_permissions (name) VALUES ('ledger.adjust');
INSERT INTO ops_role_permissions (role, permission) VALUES ('finance', 'ledger.adjust');
