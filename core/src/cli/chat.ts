import { copyFile, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isAccountId } from '@obmen/shared';
import { loadConfig, type TConfig } from '../config.ts';
import type { Db } from '../db/index.ts';
import { openStorage } from '../storage/index.ts';
import type { TReceivedFile } from '../storage/upload.ts';
import { listReports, replySupport, resolveReport, setSupportStatus, supportFileOf, supportQueue, supportThread, type TWho } from '../domains/chat/operator.ts';
import type { TCommand } from './command.ts';

/** The audit trail's actor of a command: `cli:<--as>`, else `cli:<$USER>` (the login name when unset). */
export function cliActor(as: string | undefined): TWho {
  const name = (as ?? process.env.USER ?? userInfo().username).trim();
  if (!name) throw new Error('say who you are: --as <name> (or set $USER)');
  return { actor: `cli:${name.slice(0, 100)}` };
}

function accountOf(text: string | undefined, usage: string): number {
  if (!text || !isAccountId(text)) throw new Error(usage);
  return Number(text);
}

/** Private copies of the files to send (checked and re-encoded from there, never beside the originals). */
async function withCopies<T>(paths: string[], use: (files: TReceivedFile[]) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'obmen-reply-'));
  try {
    const files: TReceivedFile[] = [];
    for (const [index, source] of paths.entries()) {
      const target = path.join(dir, `${index}.bin`);
      await copyFile(source, target);
      files.push({ field: `file${index}`, path: target, size: (await stat(target)).size });
    }
    return await use(files);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Support for operators, the desk's services from the shell: support:list [--closed],
 * support:show <account id> [--page n], support:reply <account id> <text> [--file path]…,
 * support:close / support:reopen <account id>, support:file <account id> <file id> <save to>,
 * chat:reports, chat:resolve <report id> <no_violation|violation> [note]. Each takes
 * --as <name>: the audit trail says `cli:<name>` ($USER without it).
 */
export function makeChatCommands(getConfig: () => TConfig): Record<string, TCommand> {
  const context = (db: Db) => ({ db, storage: openStorage(getConfig()) });
  const queueOptions = () => ({ now: new Date(), targetMs: getConfig().SUPPORT_FIRST_RESPONSE_MS });
  const as = { as: { type: 'string' } } as const;
  const parse = (args: string[]) => {
    const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: as });
    return { who: cliActor(values.as), positionals };
  };

  return {
    'support:list': async (db, args) => {
      const { values } = parseArgs({ args, strict: true, options: { ...as, closed: { type: 'boolean' } } });
      cliActor(values.as);
      return supportQueue(db, values.closed ? 'closed' : 'open', queueOptions());
    },
    'support:show': async (db, args) => {
      const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { ...as, page: { type: 'string' } } });
      const usage = 'usage: support:show <account id> [--page n] [--as <name>]';
      const page = Number(values.page ?? 1);
      if (!Number.isInteger(page) || page < 1) throw new Error(usage);
      return supportThread(db, cliActor(values.as), accountOf(positionals[0], usage), { ...queueOptions(), page });
    },
    'support:reply': async (db, args) => {
      const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { ...as, file: { type: 'string', multiple: true } } });
      const usage = 'usage: support:reply <account id> <text> [--file <path>]... [--as <name>]';
      const accountId = accountOf(positionals[0], usage);
      const paths = values.file ?? [];
      if (positionals.length < 2 && !paths.length) throw new Error(usage);
      const who = cliActor(values.as);
      const message = await withCopies(paths, (files) => replySupport(context(db), who, accountId, positionals.slice(1).join(' '), files));
      return { status: 'ok', account_id: accountId, message_id: message.id };
    },
    'support:close': async (db, args) => {
      const { who, positionals } = parse(args);
      const accountId = accountOf(positionals[0], 'usage: support:close <account id> [--as <name>]');
      await setSupportStatus(db, who, accountId, 'closed');
      return { status: 'ok', account_id: accountId, closed: true };
    },
    'support:reopen': async (db, args) => {
      const { who, positionals } = parse(args);
      const accountId = accountOf(positionals[0], 'usage: support:reopen <account id> [--as <name>]');
      await setSupportStatus(db, who, accountId, 'open');
      return { status: 'ok', account_id: accountId, closed: false };
    },
    'support:file': async (db, args) => {
      const { who, positionals } = parse(args);
      const usage = 'usage: support:file <account id> <file id> <save to path> [--as <name>]';
      const [, fileId, target] = positionals;
      if (!fileId || !target) throw new Error(usage);
      const ctx = context(db);
      const file = await supportFileOf(db, who, accountOf(positionals[0], usage), fileId);
      const object = await ctx.storage.get(file.storage_key);
      if (!object) throw new Error('the file is gone from storage');
      const chunks: Buffer[] = [];
      for await (const chunk of object.body) chunks.push(chunk as Buffer);
      await writeFile(target, Buffer.concat(chunks), { mode: 0o600 });
      return { status: 'ok', saved: target, size: object.size };
    },
    'chat:reports': async (db, args) => listReports(db, parse(args).who, new Date()),
    'chat:resolve': async (db, args) => {
      const { who, positionals } = parse(args);
      const [id, outcome, ...note] = positionals;
      if (!id || !/^\d+$/.test(id) || (outcome !== 'no_violation' && outcome !== 'violation'))
        throw new Error('usage: chat:resolve <report id> <no_violation|violation> [note] [--as <name>]');
      await resolveReport(db, who, Number(id), { outcome, note: note.join(' '), now: new Date() });
      return { status: 'ok', report: Number(id), outcome };
    },
  };
}

export const CHAT_COMMANDS = makeChatCommands(loadConfig);
