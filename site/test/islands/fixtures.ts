import type { TWithdrawal } from '@obmen/shared';

/** A withdrawal awaiting review, as the core answers it. */
export const requestedWithdrawal: TWithdrawal = {
  id: 'w1',
  ps: 'card',
  provider: 'sandbox',
  currency: 'USD',
  amount: '100.00',
  fee: '1.00',
  receive: '99.00',
  details: '4111 **** 1111',
  state: 'requested',
  reason: null,
  created_at: '2026-01-01T10:00:00Z',
  expected_at: null,
  finished_at: null,
  cancellable: true,
};
