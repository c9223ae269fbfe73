import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAccountId, type TChatListResponse, type TChatSentResponse, type TPrivateChatResponse, type TSupportResponse } from '@obmen/shared';
import { build, ENGINES, testConfig } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { createFixtureUser, type TFixtureUser } from '../../fixtures.ts';
import {
  activeContentOf,
  hugeWebp,
  multipart,
  pageTextOf,
  pdfActionInObjectStream,
  pdfEscapedEmbeddedFile,
  pdfEscapedJavaScript,
  pdfEscapedLaunch,
  png,
  windowsExecutable,
  type TPart,
} from '../../storage/upload-fixtures.ts';
import { openLocalStorage } from '../../../src/storage/local.ts';
import { replySupport as reply, setSupportStatus, supportQueue } from '../../../src/domains/chat/operator.ts';
import { makeChatCommands } from '../../../src/cli/chat.ts';
import type { TChatContext } from '../../../src/domains/chat/service.ts';
import { readEvents } from '../../../src/domains/events/service.ts';

async function filesUnder(dir: string): Promise<number> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).length;
  } catch {
    return 0;
  }
}

describe.each(ENGINES)('chats on %s', (engine) => {
  let ctx: Awaited<ReturnType<typeof build>>;
  let filesDir: string;
  let ops: TChatContext;

  beforeAll(async () => {
    filesDir = await mkdtemp(path.join(tmpdir(), 'obmen-chat-'));
    ctx = await build(engine, { FILES_DIR: filesDir });
    ops = { db: ctx.db, storage: openLocalStorage(filesDir) };
  });
  afterAll(async () => {
    await ctx?.close();
    await rm(filesDir, { recursive: true, force: true });
  });

  const user = () => createFixtureUser(ctx.db);
  const ann = { actor: 'cli:ann' };
  const replySupport = (accountId: number, text: string) => reply(ops, ann, accountId, text, []);
  const openQueue = () => supportQueue(ctx.db, 'open', { now: new Date(), targetMs: 15 * 60_000 });

  function upload(token: string, url: string, parts: TPart[]) {
    const { payload, headers } = multipart(parts);
    return ctx.app.inject({ method: 'POST', url, payload, headers: { ...headers, authorization: `Bearer ${token}`, 'x-obmen-locale': 'en' } });
  }

  async function messageCount(): Promise<number> {
    const [row] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM chat_messages');
    return row!.n;
  }

  const unread = async (u: TFixtureUser) => (await call(ctx.app, '/api/auth/check', { token: u.token })).json().unread_msgs;

  it('asks for a session on every call', async () => {
    const calls: Array<[string, object?]> = [
      ['/api/support'],
      ['/api/support', { text: 'hi' }],
      ['/api/support/read', { last_read_message: 1 }],
      [`/api/support/file/${randomUUID()}`],
      ['/api/chat/list'],
      ['/api/chat/private/12345674'],
      ['/api/chat/private/12345674', { message: 'hi' }],
      ['/api/chat/private/read/12345674', { last_read_message: 1 }],
      ['/api/chat/private/block/12345674', { blocked: true }],
      ['/api/chat/private/report/12345674', { reason: '' }],
    ];
    for (const [url, payload] of calls) expect((await call(ctx.app, url, payload ? { payload } : {})).statusCode, url).toBe(401);
  });

  it('support: one conversation, an operator reply counts as unread until read, the cursor never goes back', async () => {
    const u = await user();
    const sent = await call(ctx.app, '/api/support', { token: u.token, payload: { text: 'Where is my deposit? https://example.com/x' } });
    expect(sent.statusCode, sent.body).toBe(200);
    const mine = sent.json<TChatSentResponse>();
    expect(mine.message).toMatchObject({ author: 'me', text: 'Where is my deposit? https://example.com/x', files: [] });
    expect(mine.unread_msgs).toEqual({ private: 0, support: 0 });
    // A second message (as from /support or /chat/support) lands in the same conversation.
    await call(ctx.app, '/api/support', { token: u.token, payload: { text: 'Hello?' } });

    const queue = await supportQueue(ctx.db, 'open', { now: new Date(Date.now() + 5 * 60_000), targetMs: 60_000 });
    const item = queue.find((row) => row.account_id === u.accountId)!;
    expect(item).toMatchObject({ status: 'open', messages: 2, unread: 2, last_message: 'Hello?', overdue: true });
    expect(item.waited_ms).toBeGreaterThanOrEqual(4 * 60_000);

    const reply = await replySupport(u.accountId, 'It is on its way.');
    expect(await unread(u)).toEqual({ private: 0, support: 1 });
    const page = (await call(ctx.app, '/api/support', { token: u.token })).json<TSupportResponse>();
    expect(page.messages.map((m) => [m.author, m.text])).toEqual([
      ['me', 'Where is my deposit? https://example.com/x'],
      ['me', 'Hello?'],
      ['operator', 'It is on its way.'],
    ]);
    expect(page.unread_msgs.support).toBe(1);
    expect(page.last_read_message).toBeLessThan(reply.id);
    // Answered: nothing waits any more.
    expect((await openQueue()).find((row) => row.account_id === u.accountId)).toMatchObject({ waited_ms: null, unread: 0, overdue: false });

    // A cursor beyond the last message stops at it; one before the current does not move it back.
    const read = await call(ctx.app, '/api/support/read', { token: u.token, payload: { last_read_message: Number.MAX_SAFE_INTEGER } });
    expect(read.json()).toMatchObject({ status: 'ok', last_read_message: reply.id, unread_msgs: { private: 0, support: 0 } });
    const back = await call(ctx.app, '/api/support/read', { token: u.token, payload: { last_read_message: 1 } });
    expect(back.json().last_read_message).toBe(reply.id);
    expect(await unread(u)).toEqual({ private: 0, support: 0 });

    // Closed by the operator, opened again by the user's next message.
    await setSupportStatus(ctx.db, ann, u.accountId, 'closed');
    expect((await call(ctx.app, '/api/support', { token: u.token })).json<TSupportResponse>().chat.closed).toBe(true);
    expect((await openQueue()).some((row) => row.account_id === u.accountId)).toBe(false);
    await call(ctx.app, '/api/support', { token: u.token, payload: { text: 'One more thing' } });
    expect((await call(ctx.app, '/api/support', { token: u.token })).json<TSupportResponse>().chat.closed).toBe(false);
    const [audit] = await ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM operator_audit WHERE operator = 'cli:ann' AND subject = $1`, [
      `account:${u.accountId}`,
    ]);
    expect(audit!.n).toBe(2);
  });

  it('pages the conversation from the newest', async () => {
    const u = await user();
    await expect(replySupport(u.accountId, 'nobody asked')).rejects.toThrow(/chat_not_found/);
    await call(ctx.app, '/api/support', { token: u.token, payload: { text: 'start' } });
    for (let i = 0; i < 3; i++) await replySupport(u.accountId, `m${i}`);
    const page1 = (await call(ctx.app, '/api/support?page=1', { token: u.token })).json<TSupportResponse>();
    expect(page1).toMatchObject({ page: 1, pages: 1, total: 4 });
    expect(page1.messages.at(-1)?.text).toBe('m2');
    const page2 = (await call(ctx.app, '/api/support?page=2', { token: u.token })).json<TSupportResponse>();
    expect(page2.messages).toEqual([]);
    expect((await call(ctx.app, '/api/support?page=0', { token: u.token })).statusCode).toBe(400);
  });

  it('files: stored privately, an image previewed, readable only in its own conversation', async () => {
    const a = await user();
    const b = await user();
    const c = await user();
    const sent = await upload(a.token, `/api/chat/private/${b.accountId}`, [
      { name: 'message', value: 'the receipt' },
      { name: 'file0', filename: 'receipt.png', content: await png(), type: 'image/png' },
    ]);
    expect(sent.statusCode, sent.body).toBe(200);
    const file = sent.json<TChatSentResponse>().message.files[0]!;
    expect(file).toMatchObject({ mime: 'image/png', image: true, url: `/api/chat/private/${b.accountId}/file/${file.id}` });

    const asB = await call(ctx.app, `/api/chat/private/${a.accountId}/file/${file.id}`, { token: b.token });
    expect(asB.statusCode).toBe(200);
    expect(asB.headers['content-type']).toBe('image/png');
    expect(asB.headers['cache-control']).toBe('private, no-store');
    expect((await call(ctx.app, file.url, { token: a.token })).statusCode).toBe(200);

    // Another conversation's file id is as missing as an unknown one, for outsiders and participants alike.
    const missing = await call(ctx.app, `/api/chat/private/${a.accountId}/file/${randomUUID()}`, { token: b.token });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('chat_file_not_found');
    await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: c.token, payload: { message: 'hi' } });
    for (const [url, token] of [
      [`/api/chat/private/${a.accountId}/file/${file.id}`, c.token],
      [`/api/chat/private/${b.accountId}/file/${file.id}`, c.token],
      [`/api/chat/private/${c.accountId}/file/${file.id}`, a.token],
      [`/api/support/file/${file.id}`, a.token],
      [`/api/chat/private/${a.accountId}/file/not-a-uuid`, b.token],
    ] as const) {
      const res = await call(ctx.app, url, { token });
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual(missing.json());
    }

    // Support files the same way.
    const toSupport = await upload(a.token, '/api/support', [{ name: 'file0', filename: 'x.png', content: await png(), type: 'image/png' }]);
    expect(toSupport.statusCode, toSupport.body).toBe(200);
    const supportFile = toSupport.json<TChatSentResponse>().message.files[0]!;
    expect((await call(ctx.app, supportFile.url, { token: a.token })).statusCode).toBe(200);
    expect((await call(ctx.app, supportFile.url, { token: b.token })).statusCode).toBe(404);
  });

  it('files: a PDF reaches the other user rebuilt, without the scripts and attachments it was sent with', async () => {
    const a = await user();
    const b = await user();
    for (const make of [pdfEscapedJavaScript, pdfEscapedLaunch, pdfEscapedEmbeddedFile, pdfActionInObjectStream]) {
      const sent = await upload(a.token, `/api/chat/private/${b.accountId}`, [
        { name: 'file0', filename: 'invoice.pdf', content: make(), type: 'application/pdf' },
      ]);
      expect(sent.statusCode, sent.body).toBe(200);
      const file = sent.json<TChatSentResponse>().message.files[0]!;
      const got = await call(ctx.app, `/api/chat/private/${a.accountId}/file/${file.id}`, { token: b.token });
      expect(got.statusCode).toBe(200);
      expect(got.headers['content-disposition']).toMatch(/^attachment; /);
      expect(await activeContentOf(got.rawPayload), make.name).toEqual([]);
      expect(await pageTextOf(got.rawPayload)).toEqual([expect.stringContaining('(PASSPORT 4567) Tj')]);
    }
  });

  it('files: a 49-megapixel picture is refused by its size, and files count against upload_user', async () => {
    const a = await user();
    const before = { messages: await messageCount(), files: await filesUnder(filesDir) };
    const huge = await upload(a.token, '/api/support', [{ name: 'file0', filename: 'x.webp', content: await hugeWebp(), type: 'image/webp' }]);
    expect(huge.statusCode).toBe(415);
    expect(huge.json()).toMatchObject({
      code: 'file_refused',
      fields: { file0: 'This picture is too large: at most 24 megapixels. Send a smaller photo or a screenshot.' },
    });
    expect({ messages: await messageCount(), files: await filesUnder(filesDir) }).toEqual(before);
    const image = await png();
    // The refused one counted: 19 more messages with a file, then 429; a message without files still goes.
    for (let i = 0; i < 19; i++) expect((await upload(a.token, '/api/support', [{ name: 'file0', filename: 'x.png', content: image }])).statusCode).toBe(200);
    const over = await upload(a.token, '/api/support', [{ name: 'file0', filename: 'x.png', content: image }]);
    expect(over.statusCode).toBe(429);
    expect(over.json().code).toBe('rate_limited');
    expect((await upload(a.token, '/api/support', [{ name: 'text', value: 'just text' }])).statusCode).toBe(200);
  });

  it('refuses a file of the wrong type and stores nothing', async () => {
    const a = await user();
    const before = { messages: await messageCount(), files: await filesUnder(filesDir) };
    const res = await upload(a.token, '/api/support', [
      { name: 'text', value: 'see attached' },
      { name: 'file0', filename: 'invoice.pdf', content: windowsExecutable(), type: 'application/pdf' },
    ]);
    expect(res.statusCode).toBe(415);
    expect(res.json()).toMatchObject({ code: 'file_refused', fields: { file0: expect.any(String) } });
    expect({ messages: await messageCount(), files: await filesUnder(filesDir) }).toEqual(before);
  });

  it('refuses a 1 MB message clearly, as JSON and as a form field, and writes nothing', async () => {
    const a = await user();
    const b = await user();
    const before = await messageCount();
    const huge = 'x'.repeat(1_000_000);
    for (const res of [
      await call(ctx.app, '/api/support', { token: a.token, locale: 'en', payload: { text: huge } }),
      await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, locale: 'en', payload: { message: huge } }),
      await upload(a.token, '/api/support', [{ name: 'text', value: huge }]),
      await upload(a.token, `/api/chat/private/${b.accountId}`, [{ name: 'message', value: huge }]),
    ]) {
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().fields).toEqual({ [Object.keys(res.json().fields)[0]!]: 'A message has at most 4,000 characters.' });
    }
    // 4,000 characters pass; one more does not.
    expect((await call(ctx.app, '/api/support', { token: a.token, payload: { text: 'y'.repeat(4000) } })).statusCode).toBe(200);
    expect((await call(ctx.app, '/api/support', { token: a.token, payload: { text: 'y'.repeat(4001) } })).statusCode).toBe(400);
    expect(await messageCount()).toBe(before + 1);
    // Nothing to send, and hidden reordering characters, are refused too.
    expect((await call(ctx.app, '/api/support', { token: a.token, payload: { text: '   ' } })).json().fields).toEqual({
      text: 'Write a message or attach a file.',
    });
    expect((await call(ctx.app, '/api/support', { token: a.token, payload: { text: 'pay 1\u202e000' } })).statusCode).toBe(400);
  });

  it('stops a flood at the 31st message a minute', async () => {
    const a = await user();
    const b = await user();
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++)
      statuses.push((await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: `spam ${i}` } })).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.slice(30)).toEqual(Array(10).fill(429));
    const last = await call(ctx.app, '/api/support', { token: a.token, payload: { text: 'help' } });
    expect(last.statusCode).toBe(429);
    expect(last.headers['retry-after']).toBeDefined();
    expect((await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: b.token })).json<TPrivateChatResponse>().total).toBe(30);
  });

  it('private: B sees the badge and the message, reads it; list, envelope and cursor agree', async () => {
    const a = await user();
    const b = await user();
    expect((await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'hello B' } })).statusCode).toBe(200);
    await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'are you there?' } });
    expect(await unread(b)).toEqual({ private: 2, support: 0 });
    expect(await unread(a)).toEqual({ private: 0, support: 0 });
    // Titled by name, never by e-mail: with no first name given, "Account N" in the reader's language.
    const list = (await call(ctx.app, '/api/chat/list', { token: b.token, locale: 'en' })).json<TChatListResponse>();
    expect(list.chats).toEqual([{ id: a.accountId, title: `Account ${a.accountId}`, unread_msgs: 2, blocked: false }]);
    expect((await call(ctx.app, '/api/chat/list', { token: b.token, locale: 'ru' })).json<TChatListResponse>().chats[0]!.title).toBe(`Счёт ${a.accountId}`);
    await ctx.db.query(`UPDATE users SET first_name = ' Анна ', last_name = 'смирнова' WHERE id = $1`, [a.id]);
    expect((await call(ctx.app, '/api/chat/list', { token: b.token, locale: 'en' })).json<TChatListResponse>().chats[0]!.title).toBe('Анна С.');
    const chat = (await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: b.token })).json<TPrivateChatResponse>();
    expect(chat.chat.title).toBe('Анна С.');
    expect(JSON.stringify(chat)).not.toContain(a.email);
    expect(chat.messages.map((m) => [m.author, m.text])).toEqual([
      ['other', 'hello B'],
      ['other', 'are you there?'],
    ]);
    const first = chat.messages[0]!.id;
    await call(ctx.app, `/api/chat/private/read/${a.accountId}`, { token: b.token, payload: { last_read_message: first } });
    expect(await unread(b)).toEqual({ private: 1, support: 0 });
    const reply = await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: b.token, payload: { message: 'yes' } });
    // Replying moves B's cursor to B's own message, past A's second one.
    expect(reply.json<TChatSentResponse>().unread_msgs).toEqual({ private: 0, support: 0 });
    expect(await unread(a)).toEqual({ private: 1, support: 0 });
    expect((await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token })).json<TPrivateChatResponse>().messages.map((m) => m.author)).toEqual([
      'me',
      'me',
      'other',
    ]);
  });

  it('records live events in the same transaction: the message as each side sees it, and exact counters', async () => {
    const a = await user();
    const b = await user();
    const events = async (u: TFixtureUser) => {
      const replay = await readEvents(ctx.db, u.id, 0);
      return replay.kind === 'events' ? replay.events.map((event) => ({ type: event.type, payload: event.payload })) : [];
    };
    await ctx.db.query(`UPDATE users SET first_name = 'Bob', locale = 'en' WHERE id = $1`, [b.id]);
    const sent = await upload(a.token, `/api/chat/private/${b.accountId}`, [
      { name: 'message', value: 'look' },
      { name: 'file0', filename: 'a.png', content: await png(), type: 'image/png' },
    ]);
    const message = sent.json<TChatSentResponse>().message;
    const forB = await events(b);
    expect(forB).toEqual([
      {
        type: 'chat.message',
        payload: {
          chat: a.accountId,
          // The title for the reader's sidebar, in the reader's language (A gave no name).
          title: `Account ${a.accountId}`,
          message: { ...message, author: 'other', files: [{ ...message.files[0]!, url: `/api/chat/private/${a.accountId}/file/${message.files[0]!.id}` }] },
        },
      },
      { type: 'unread_msgs', payload: { unread_msgs: { private: 1, support: 0 } } },
    ]);
    expect(await events(a)).toEqual([
      { type: 'chat.message', payload: { chat: b.accountId, title: 'Bob', message } },
      { type: 'unread_msgs', payload: { unread_msgs: { private: 0, support: 0 } } },
    ]);
    await call(ctx.app, `/api/chat/private/read/${a.accountId}`, { token: b.token, payload: { last_read_message: message.id } });
    expect((await events(b)).at(-1)).toEqual({ type: 'unread_msgs', payload: { unread_msgs: { private: 0, support: 0 } } });
    // Reading again moves nothing and records nothing.
    await call(ctx.app, `/api/chat/private/read/${a.accountId}`, { token: b.token, payload: { last_read_message: message.id } });
    expect(await events(b)).toHaveLength(3);
    // A refused message records nothing.
    await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'x'.repeat(5000) } });
    expect(await events(b)).toHaveLength(3);
    // An operator's reply reaches the user live too.
    await call(ctx.app, '/api/support', { token: b.token, payload: { text: 'help' } });
    await replySupport(b.accountId, 'here');
    expect((await events(b)).slice(-2)).toEqual([
      { type: 'chat.message', payload: { chat: 'support', message: expect.objectContaining({ author: 'operator', text: 'here' }) } },
      { type: 'unread_msgs', payload: { unread_msgs: { private: 0, support: 1 } } },
    ]);
  });

  it('gives oneself and an unknown account the same answer', async () => {
    const a = await user();
    const b = await user();
    let unknown = makeAccountId(1_000_000);
    while ((await ctx.db.query('SELECT 1 FROM users WHERE account_id = $1', [unknown])).length)
      unknown = makeAccountId(1_000_000 + Math.floor(Math.random() * 8_000_000));
    const self = await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: a.token, payload: { message: 'me' } });
    const nobody = await call(ctx.app, `/api/chat/private/${unknown}`, { token: a.token, payload: { message: 'me' } });
    expect(self.statusCode).toBe(404);
    expect(nobody.statusCode).toBe(404);
    expect(self.json()).toEqual(nobody.json());
    expect(self.json().code).toBe('chat_not_found');
    expect((await call(ctx.app, '/api/chat/private/123', { token: a.token, payload: { message: 'me' } })).json()).toEqual(self.json());
    // Reading: an unknown account looks like a real one nobody has written to yet.
    const strip = (body: TPrivateChatResponse) => ({ ...body, chat: { ...body.chat, id: 0, title: '' } });
    const empty = (await call(ctx.app, `/api/chat/private/${unknown}`, { token: a.token })).json<TPrivateChatResponse>();
    const fresh = (await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token })).json<TPrivateChatResponse>();
    expect(strip(empty)).toEqual(strip(fresh));
  });

  it('blocks either way, and unblocks; reports a conversation', async () => {
    const a = await user();
    const b = await user();
    await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'buy my coin' } });
    const blocked = await call(ctx.app, `/api/chat/private/block/${a.accountId}`, { token: b.token, payload: { blocked: true } });
    expect(blocked.json()).toEqual({ status: 'ok', blocked: true });
    const refused = await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, locale: 'en', payload: { message: 'hello?' } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'chat_blocked', message: 'This account does not take your messages.' });
    const own = await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: b.token, locale: 'en', payload: { message: 'no' } });
    expect(own.statusCode).toBe(403);
    expect(own.json().message).toBe('You blocked this account. Unblock it to write.');
    expect((await call(ctx.app, '/api/chat/list', { token: b.token })).json<TChatListResponse>().chats[0]?.blocked).toBe(true);
    expect((await call(ctx.app, `/api/chat/private/${a.accountId}`, { token: b.token })).json<TPrivateChatResponse>().chat.blocked).toBe(true);

    const report = await call(ctx.app, `/api/chat/private/report/${a.accountId}`, { token: b.token, payload: { reason: 'spam' } });
    expect(report.json()).toEqual({ status: 'ok' });
    const [row] = await ctx.db.query<{ reason: string }>('SELECT reason FROM chat_reports r JOIN users u ON u.id = r.reporter_id WHERE u.account_id = $1', [
      b.accountId,
    ]);
    expect(row?.reason).toBe('spam');
    const c = await user();
    expect((await call(ctx.app, `/api/chat/private/report/${c.accountId}`, { token: b.token, payload: { reason: '' } })).statusCode).toBe(404);

    await call(ctx.app, `/api/chat/private/block/${a.accountId}`, { token: b.token, payload: { blocked: 'false' } });
    expect((await call(ctx.app, `/api/chat/private/${b.accountId}`, { token: a.token, payload: { message: 'sorry' } })).statusCode).toBe(200);
  });

  it('operator commands: list, show, reply with a file, close (audited)', async () => {
    const u = await user();
    await call(ctx.app, '/api/support', { token: u.token, payload: { text: 'help me' } });
    const commands = makeChatCommands(() => testConfig({ FILES_DIR: filesDir }));
    const picture = path.join(filesDir, 'reply.png');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(picture, await png());
    const list = (await commands['support:list']!(ctx.db, ['--as', 'bob'])) as Array<{ account_id: number }>;
    expect(list.some((row) => row.account_id === u.accountId)).toBe(true);
    await commands['support:reply']!(ctx.db, [String(u.accountId), 'See', 'the', 'picture', '--file', picture, '--as', 'bob']);
    const shown = (await commands['support:show']!(ctx.db, [String(u.accountId), '--as', 'bob'])) as {
      messages: Array<{ author: string; text: string; files: unknown[] }>;
    };
    expect(shown.messages.map((m) => [m.author, m.text, m.files.length])).toEqual([
      ['customer', 'help me', 0],
      ['operator', 'See the picture', 1],
    ]);
    const page = (await call(ctx.app, '/api/support', { token: u.token })).json<TSupportResponse>();
    const file = page.messages[1]!.files[0]!;
    expect((await call(ctx.app, file.url, { token: u.token })).statusCode).toBe(200);
    await commands['support:close']!(ctx.db, [String(u.accountId), '--as', 'bob']);
    await expect(commands['support:reply']!(ctx.db, ['12345678', 'x', '--as', 'bob'])).rejects.toThrow(/usage/);
    const audit = await ctx.db.query<{ action: string }>(`SELECT action FROM operator_audit WHERE operator = 'cli:bob' ORDER BY id`);
    expect(audit.map((row) => row.action)).toEqual(['support.reply', 'support.show', 'support.close']);
  });
});
