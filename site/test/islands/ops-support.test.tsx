// @vitest-environment happy-dom
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { DICTIONARIES, type TOpsSupportItem, type TOpsSupportMessage } from '@obmen/shared';
import OpsSupport from '../../src/islands/OpsSupport.tsx';
import OpsDashboard from '../../src/islands/ops/OpsDashboard.tsx';
import { mockApi, ok, refused, resetAfterEach } from './api-mock.ts';

/** The desk's socket, held by the test: it says what the core would send over /ws?ops=1. */
class FakeSocket {
  static last: FakeSocket | null = null;
  url: string;
  onopen: (() => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  constructor(url: string) {
    this.url = url;
    FakeSocket.last = this;
  }
  close() {}
  say(message: object) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
}

const TARGET = 15 * 60_000;
const item = (overrides: Partial<TOpsSupportItem> = {}): TOpsSupportItem => ({
  account_id: 12345674,
  status: 'open',
  waiting_since: '2026-11-27T08:40:00.000Z',
  waited_ms: 20 * 60_000,
  overdue: true,
  unread: 2,
  messages: 2,
  last_message: 'Hello?',
  last_message_at: '2026-11-27T08:41:00.000Z',
  claim: null,
  ...overrides,
});
const message = (id: number, author: 'customer' | 'operator', text: string): TOpsSupportMessage => ({
  id,
  author,
  text,
  files: [],
  created_at: '2026-11-27T08:40:00.000Z',
});
const list = (items: TOpsSupportItem[], unread = 2) => ok({ target_ms: TARGET, unread, conversations: items });
const thread = (conversation: TOpsSupportItem) =>
  ok({ conversation, messages: [message(1, 'customer', 'Where is my deposit?'), message(2, 'customer', 'Hello?')] });
const REPLIES = ok({
  replies: [
    { id: 1, locale: 'en', title: 'Greeting', body: 'Hello! This is Obmen support.' },
    { id: 2, locale: 'ru', title: 'Приветствие', body: 'Здравствуйте!' },
  ],
});

const show = () => render(<OpsSupport locale="en" messages={DICTIONARIES.en} timeZone="UTC" />);

resetAfterEach();
beforeEach(() => {
  vi.stubGlobal('WebSocket', FakeSocket);
  window.history.replaceState(null, '', '/ops/support');
});

describe('OpsSupport', () => {
  it('lists the conversations with their clocks and holders; a colleague’s claim locks the reply', async () => {
    mockApi({
      '/ops/support/replies': [REPLIES],
      '/ops/support?status=open': [
        list([
          item(),
          item({
            account_id: 23456789,
            waited_ms: null,
            overdue: false,
            unread: 0,
            claim: { operator: 'bob@obmen.test', mine: false, lapses_at: '2026-11-27T09:10:00.000Z' },
          }),
        ]),
      ],
      '/ops/support/23456789': [
        thread(item({ account_id: 23456789, claim: { operator: 'bob@obmen.test', mine: false, lapses_at: '2026-11-27T09:10:00.000Z' } })),
      ],
    });
    show();
    const rows = await screen.findAllByTestId('desk-item');
    expect(rows.map((row) => row.dataset.account)).toEqual(['12345674', '23456789']);
    expect(within(rows[0]!).getByTestId('desk-waited').textContent).toBe('Waiting 20 min of 15 min · overdue');
    expect(within(rows[1]!).getByTestId('desk-claim-note').textContent).toBe('Taken by bob@obmen.test');
    expect(screen.getByTestId('desk-unread').textContent).toBe('Unanswered messages: 2');
    fireEvent.click(rows[1]!);
    expect(await screen.findByTestId('desk-thread')).toBeTruthy();
    expect(window.location.search).toBe('?account=23456789');
    expect((screen.getByTestId('desk-claim') as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId('desk-send') as HTMLButtonElement).disabled).toBe(true);
  });

  it('claims, fills the box from a saved reply and sends it; the conversation is read again', async () => {
    const mine = { operator: 'ann@obmen.test', mine: true, lapses_at: '2026-11-27T09:10:00.000Z' };
    const calls = mockApi({
      '/ops/support/replies': [REPLIES],
      '/ops/support?status=open': [list([item()]), list([item({ claim: mine })]), list([item({ claim: mine, unread: 0, waited_ms: null })], 0)],
      '/ops/support/12345674': [thread(item()), thread(item({ claim: mine })), thread(item({ claim: mine, unread: 0, waited_ms: null }))],
      '/ops/support/12345674/claim': [ok({ claim: mine })],
      '/ops/support/12345674/reply': [ok({ message: message(3, 'operator', 'Hello! This is Obmen support.') })],
    });
    window.history.replaceState(null, '', '/ops/support?account=12345674');
    show();
    fireEvent.click(await screen.findByTestId('desk-claim'));
    expect(await screen.findByText('Give back')).toBeTruthy();
    fireEvent.change(screen.getByTestId('desk-saved'), { target: { value: '1' } });
    expect((screen.getByTestId('desk-reply') as HTMLTextAreaElement).value).toBe('Hello! This is Obmen support.');
    fireEvent.click(screen.getByTestId('desk-send'));
    await screen.findByText('Unanswered messages: 0');
    const reply = calls.find((call) => call.path === '/ops/support/12345674/reply');
    expect(reply).toMatchObject({ method: 'POST' });
  });

  it('a colleague’s claim refusal is shown where the reply is written', async () => {
    mockApi({
      '/ops/support/replies': [REPLIES],
      '/ops/support?status=open': [list([item()])],
      '/ops/support/12345674': [thread(item())],
      '/ops/support/12345674/claim': [refused(409, 'ops_claimed', 'Another operator is already working on this.')],
    });
    window.history.replaceState(null, '', '/ops/support?account=12345674');
    show();
    fireEvent.click(await screen.findByTestId('desk-claim'));
    expect((await screen.findByTestId('desk-error')).textContent).toBe('Another operator is already working on this.');
  });

  it('the live line updates the header and reads the list again', async () => {
    const calls = mockApi({
      '/ops/support/replies': [REPLIES],
      '/ops/support?status=open': [list([item()]), list([item({ unread: 3 })], 3)],
    });
    show();
    await screen.findAllByTestId('desk-item');
    expect(FakeSocket.last?.url).toMatch(/\/ws\?ops=1$/);
    act(() => FakeSocket.last!.say({ type: 'ops.support', unread: 3, waiting: 1, last: 9 }));
    expect(await screen.findByText('Unanswered messages: 3')).toBeTruthy();
    await screen.findByText('3 new');
    expect(calls.filter((call) => call.path === '/ops/support?status=open')).toHaveLength(2);
  });
});

describe('OpsDashboard', () => {
  it("shows the operator's queues with target, oldest age and overdue count, today's volumes and the parts' health", async () => {
    mockApi({
      '/ops/dashboard': [
        ok({
          day: '2026-03-01',
          queues: [
            { name: 'support', target_ms: TARGET, count: 3, oldest_ms: 90 * 60_000, overdue: 2 },
            { name: 'kyc', target_ms: 86_400_000, count: 1, oldest_ms: 26 * 3_600_000, overdue: 1 },
            { name: 'chat_reports', target_ms: 86_400_000, count: 0, oldest_ms: null, overdue: 0 },
          ],
          volumes: [{ kind: 'deposits', currency: 'RUB', count: 2, amount: '1500.5' }],
          health: [
            { part: 'database', state: 'ok', value: 3, at: null },
            { part: 'webhooks', state: 'warn', value: 4, at: null },
            { part: 'payouts', state: 'unknown', value: null, at: null },
            { part: 'realtime', state: 'ok', value: 1, at: '2026-03-01T10:00:00.000Z' },
          ],
        }),
      ],
    });
    render(<OpsDashboard locale="en" messages={DICTIONARIES.en} timeZone="UTC" />);
    const support = await screen.findByTestId('ops-queue-support');
    expect([...support.querySelectorAll('th, td')].map((cell) => cell.textContent)).toEqual(['Supporttarget 15 min', '2', '3', '1 h 30 min']);
    expect([...screen.getByTestId('ops-queue-kyc').querySelectorAll('th, td')].map((cell) => cell.textContent)).toEqual([
      'Identity reviewtarget 1 d',
      '1',
      '1',
      '1 d 2 h',
    ]);
    expect(screen.getByTestId('ops-queue-chat_reports').querySelectorAll('td')[2]!.textContent).toBe('—');
    expect(screen.getByTestId('ops-home-volumes').textContent).toContain('Deposits');
    expect(screen.getByTestId('ops-health-webhooks').textContent).toBe('Payment system eventslate4 waiting');
    expect(screen.getByTestId('ops-health-payouts').textContent).toBe('Payout workernot running here');
  });
});
