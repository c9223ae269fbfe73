import { describe, expect, it } from 'vitest';
import { setClientMessages } from '../src/lib/client-i18n.ts';
import { clientMessageTemplates } from '../src/lib/i18n.ts';
import { popupText } from '../src/scripts/live.ts';

describe('the payment popup', () => {
  it('names the amount and the currencies with the messages the layout ships (ru)', () => {
    setClientMessages(clientMessageTemplates('ru'), 'ru');
    expect(popupText({ kind: 'exchange', currency: 'USDT', amount: '750', to: 'BTC' }, 'ru')).toBe('Кто-то обменял 750\u00a0USDT на BTC');
    expect(popupText({ kind: 'transfer', currency: 'RUB', amount: '500', to: undefined }, 'ru')).toBe('Кто-то отправил 500\u00a0RUB');
  });

  it('does the same in English', () => {
    setClientMessages(clientMessageTemplates('en'), 'en');
    expect(popupText({ kind: 'exchange', currency: 'ETH', amount: '2', to: 'USDT' }, 'en')).toMatch(/^\S.* 2\u00a0ETH .*USDT$/);
  });
});
