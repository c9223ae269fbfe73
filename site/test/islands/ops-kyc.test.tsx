// @vitest-environment happy-dom
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { DICTIONARIES, type TOpsKycQueueItem, type TOpsKycReview } from '@obmen/shared';
import OpsKyc from '../../src/islands/OpsKyc.tsx';
import { VerificationSide } from '../../src/islands/VerificationSide.tsx';
import { IslandRoot } from '../../src/islands/IslandRoot.tsx';
import { mockApi, ok, refused, resetAfterEach, stubNavigation } from './api-mock.ts';

const en = DICTIONARIES.en;
const ID = '0b7c1f39-38f5-4bd4-a0f9-34c9d04ec0a5';
const HOUR = 60 * 60_000;

const item = (over: Partial<TOpsKycQueueItem>): TOpsKycQueueItem => ({
  id: ID,
  type: 'passport',
  account_id: 1000123,
  submitted_at: '2026-11-26T08:00:00Z',
  waiting_ms: 2 * HOUR,
  overdue: false,
  files: 2,
  resubmitted: false,
  claim: null,
  ...over,
});

const review: TOpsKycReview = {
  id: ID,
  account_id: 1000123,
  type: 'passport',
  status: 'submitted',
  submitted_at: '2026-11-26T08:00:00Z',
  waiting_ms: 3 * HOUR,
  document: {
    number: 'AB1234567',
    issuing_country: 'DE',
    issue_date: '2020-01-15',
    expiry_date: '2030-01-14',
    first_name: 'Anna',
    last_name: 'Schmidt',
    middle_name: null,
    birth_date: '1990-05-01',
  },
  checks: { expired: false, age_years: 36, adult: true, duplicates: [{ account_id: 1000777, status: 'approved' }] },
  files: [
    { id: 'f1', side: 'front', mime: 'image/jpeg', size: 1000, url: '/api/ops/kyc/file/f1', reject_reason: null, reject_note: null },
    { id: 'f2', side: 'selfie', mime: 'image/jpeg', size: 1000, url: '/api/ops/kyc/file/f2', reject_reason: null, reject_note: null },
  ],
  claim: { email: 'me@obmen.test', mine: true, lapses_at: '2026-11-26T11:15:00Z' },
};

const sentBody = (index: number) => JSON.parse(String((vi.mocked(fetch).mock.calls[index]![1] as RequestInit).body)) as unknown;

resetAfterEach();
const assign = stubNavigation();

describe('identity review islands', () => {
  it('lists the queue with waiting time against the target, overdue marked, and a claim opens the review', async () => {
    const calls = mockApi({
      '/ops/kyc': [
        ok({
          target_ms: 24 * HOUR,
          items: [item({ waiting_ms: 26 * HOUR, overdue: true }), item({ id: 'other', claim: { email: 'x@obmen.test', mine: false, lapses_at: '' } })],
        }),
      ],
      [`/ops/kyc/${ID}/claim`]: [ok({ claim: { email: 'me@obmen.test', mine: true, lapses_at: '' } })],
    });
    render(<OpsKyc locale="en" messages={en} timeZone="UTC" mode="queue" />);
    const items = await screen.findAllByTestId('kyc-item');
    expect(items[0]!.textContent).toContain('Waiting 1 d 2 h (target 1 d)');
    expect(items[0]!.textContent).toContain('overdue');
    expect(items[1]!.textContent).toContain('Claimed by x@obmen.test');
    expect(screen.getByTestId('kyc-queue-summary').textContent).toBe('In the queue: 2, overdue: 1');
    // Held by a colleague: only opened, never claimed from here.
    expect(screen.getAllByTestId('kyc-claim')).toHaveLength(1);
    fireEvent.click(screen.getByTestId('kyc-claim'));
    await waitFor(() => expect(assign).toHaveBeenCalledWith(`/ops/kyc/${ID}`));
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual(['GET /ops/kyc', `POST /ops/kyc/${ID}/claim`]);
  });

  it('shows "not your role" on 403', async () => {
    mockApi({ '/ops/kyc': [refused(403, 'ops_forbidden', en['ops.forbidden']!)] });
    render(<OpsKyc locale="en" messages={en} timeZone="UTC" mode="queue" />);
    expect((await screen.findByTestId('ops-forbidden')).textContent).toContain(en['ops.forbidden']);
  });

  it('asks for the code when the review needs a fresh second factor (the shared step-up form), then shows it: images beside the data and the checks', async () => {
    const calls = mockApi({
      [`/ops/kyc/${ID}`]: [refused(403, 'step_up_required', en['ops.step_up_required']!), ok({ review })],
      '/ops/step-up': [refused(400, 'validation', 'Wrong code', { code: 'Wrong code' }), ok({})],
    });
    render(<OpsKyc locale="en" messages={en} timeZone="UTC" mode="review" id={ID} />);
    await screen.findByTestId('ops-step-up');
    fireEvent.change(screen.getByTestId('ops-step-up-code'), { target: { value: '000000' } });
    fireEvent.click(screen.getByTestId('ops-step-up-submit'));
    expect((await screen.findByTestId('ops-step-up-error')).textContent).toBe('Wrong code');
    fireEvent.change(screen.getByTestId('ops-step-up-code'), { target: { value: '123456' } });
    fireEvent.click(screen.getByTestId('ops-step-up-submit'));
    expect((await screen.findByTestId('kyc-data')).textContent).toContain('AB1234567');
    expect(screen.queryByTestId('ops-step-up')).toBeNull();
    expect(screen.getByTestId('kyc-image-front').querySelector('img')!.getAttribute('src')).toBe('/api/ops/kyc/file/f1');
    expect(screen.getByTestId('kyc-check-duplicates').textContent).toContain('1000777');
    expect(sentBody(2)).toEqual({ code: '123456' });
    expect(calls.map((call) => call.path)).toEqual([`/ops/kyc/${ID}`, '/ops/step-up', '/ops/step-up', `/ops/kyc/${ID}`]);
  });

  it('cancelling the step-up leaves the refusal on screen', async () => {
    mockApi({ [`/ops/kyc/${ID}`]: [refused(403, 'step_up_required', en['ops.step_up_required']!)] });
    render(<OpsKyc locale="en" messages={en} timeZone="UTC" mode="review" id={ID} />);
    await screen.findByTestId('ops-step-up');
    fireEvent.click(screen.getByText(en['ops.cancel']!));
    expect((await screen.findByTestId('ops-load-error')).textContent).toBe(en['ops.step_up_required']);
  });

  it('rejects one file with a catalogue reason, showing the operator what the customer will be told to redo', async () => {
    mockApi({ [`/ops/kyc/${ID}`]: [ok({ review })], [`/ops/kyc/${ID}/reject`]: [ok({ verification_status: 'rejected' })] });
    render(<OpsKyc locale="en" messages={en} timeZone="UTC" mode="review" id={ID} />);
    expect(await screen.findByTestId('kyc-approve')).toBeTruthy();
    fireEvent.change(screen.getByTestId('kyc-reason-front'), { target: { value: 'blurry' } });
    expect(screen.getByTestId('kyc-decide-front').textContent).toContain(en['verification.redo.blurry']);
    fireEvent.click(screen.getByTestId('kyc-reject'));
    expect((await screen.findByTestId('kyc-decided')).textContent).toContain(en['ops.kyc.done_rejected']);
    expect(sentBody(1)).toEqual({ files: [{ side: 'front', reason: 'blurry' }] });
  });

  it("the customer's side shows the reason and what to redo", () => {
    render(
      <IslandRoot locale="en" messages={en}>
        <VerificationSide
          side="front"
          state={{}}
          file={{ id: 'f1', side: 'front', mime: 'image/jpeg', size: 10, url: '/x', reject_reason: 'blurry', reject_note: null }}
          editable
          error={undefined}
          dragging={false}
          hydrated
          onDragging={() => {}}
          onDrop={() => {}}
          onPick={() => {}}
        />
      </IslandRoot>,
    );
    expect(screen.getByTestId('rejected-front').textContent).toBe('Not accepted: blurry or unreadable');
    expect(screen.getByTestId('redo-front').textContent).toContain(en['verification.redo.blurry']);
    expect(screen.getByTestId('file-front')).toBeTruthy();
  });
});
