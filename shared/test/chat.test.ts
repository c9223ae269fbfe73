import { describe, expect, it } from 'vitest';
import { ZChatMessageFields } from '../src/chat.ts';
import { splitLinks, unreadPopupHiddenOn } from '../src/chat-text.ts';

describe('splitLinks', () => {
  it('finds http(s) links and leaves closing punctuation as text', () => {
    expect(splitLinks('see https://example.com/a?b=1, then (http://x.org/y).')).toEqual([
      { text: 'see ' },
      { text: 'https://example.com/a?b=1', href: 'https://example.com/a?b=1' },
      { text: ', then (' },
      { text: 'http://x.org/y', href: 'http://x.org/y' },
      { text: ').' },
    ]);
  });
  it('never makes links of other schemes or markup', () => {
    const text = 'javascript:alert(1) <a href="https://evil">x</a> data:text/html,hi';
    const parts = splitLinks(text);
    expect(parts.map((part) => part.text).join('')).toBe(text);
    expect(parts.filter((part) => part.href).map((part) => part.href)).toEqual(['https://evil/']);
  });
  it('keeps plain text as one part', () => {
    expect(splitLinks('hello')).toEqual([{ text: 'hello' }]);
    expect(splitLinks('')).toEqual([]);
  });
});

describe('unreadPopupHiddenOn', () => {
  it('hides on exchange and chat pages only', () => {
    for (const path of ['/exchanges', '/exchange/all', '/exchange/BTC/USDT', '/chat', '/chat/support', '/chat/private/12345674', '/support']) {
      expect(unreadPopupHiddenOn(path), path).toBe(true);
    }
    for (const path of ['/', '/transfer', '/history/exchange', '/chatroom', '/exchangesx', '/settings']) expect(unreadPopupHiddenOn(path), path).toBe(false);
  });
});

describe('ZChatMessageFields', () => {
  it('bounds the text and refuses bidirectional controls', () => {
    expect(ZChatMessageFields.safeParse({ text: 'x'.repeat(4000) }).success).toBe(true);
    expect(ZChatMessageFields.safeParse({ text: 'x'.repeat(4001) }).error?.issues[0]?.message).toBe('chat.message_too_long');
    expect(ZChatMessageFields.safeParse({ message: 'a\u202eb' }).success).toBe(false);
  });
});
