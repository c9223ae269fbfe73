// @vitest-environment happy-dom
import { fireEvent, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { DICTIONARIES, type TWithdrawal } from '@obmen/shared';
import WithdrawStatusIsland from '../../src/islands/WithdrawStatus.tsx';
import { requestedWithdrawal, walletEnvelope } from './fixtures.ts';
import { expectRetriedThenRenewed, mockApi, ok, refused, UNAVAILABLE, unavailable, resetAfterEach } from './api-mock.ts';

const cancelled: TWithdrawal = { ...requestedWithdrawal, state: 'cancelled', cancellable: false };

const show = () => render(<WithdrawStatusIsland locale="en" messages={DICTIONARIES.en} withdrawal={requestedWithdrawal} />);

resetAfterEach();

describe('WithdrawStatus', () => {
  it('cancels the request and shows its new state', async () => {
    const calls = mockApi({ '/withdraw/cancel/w1': [ok({ withdrawal: cancelled, message: 'Request cancelled', ...walletEnvelope })] });
    show();
    fireEvent.click(screen.getByTestId('withdraw-cancel'));
    expect(await screen.findByText('Request cancelled')).toBeTruthy();
    expect(screen.getByTestId('withdraw-status').dataset.state).toBe('cancelled');
    expect(screen.queryByTestId('withdraw-cancel')).toBeNull();
    expect(calls[0]).toMatchObject({ method: 'POST', key: expect.any(String) });
  });

  it('sends a retried cancel with the same key after 503, a new one after a final answer', async () => {
    const calls = mockApi({
      '/withdraw/cancel/w1': [unavailable(), refused(409, 'not_cancellable', 'It can no longer be cancelled'), unavailable()],
    });
    show();
    fireEvent.click(screen.getByTestId('withdraw-cancel'));
    expect((await screen.findByTestId('withdraw-message')).textContent).toBe(UNAVAILABLE);
    fireEvent.click(screen.getByTestId('withdraw-cancel'));
    expect(await screen.findByText('It can no longer be cancelled')).toBeTruthy();
    fireEvent.click(screen.getByTestId('withdraw-cancel'));
    await screen.findByText(UNAVAILABLE);
    expectRetriedThenRenewed(calls.map((call) => call.key));
  });
});
