import { parseArgs } from 'node:util';
import { isAccountId } from '@obmen/shared';
import { loadConfig, type TConfig } from '../config.ts';
import type { Db } from '../db/index.ts';
import { openStorage } from '../storage/index.ts';
import { closeSupport, listReports, listSupportQueue, replySupport, saveSupportFile, showSupport } from '../domains/chat/operator.ts';
import { operatorOf, type TCommand } from './command.ts';

const who = (values: object) => operatorOf((values as { operator?: string }).operator);

function accountOf(text: string | undefined, usage: string): number {
  if (!text || !isAccountId(text)) throw new Error(usage);
  return Number(text);
}

/**
 * Support for operators: support:list [--all], support:show <account id> [--page n],
 * support:reply <account id> <text> [--file path]…, support:close <account id>,
 * support:file <file id> <save to path>, chat:reports. Each takes --operator <name> (audited).
 */
export function makeChatCommands(getConfig: () => TConfig): Record<string, TCommand> {
  const context = (db: Db) => ({ db, storage: openStorage(getConfig()) });
  const operator = { operator: { type: 'string' } } as const;
  const parse = (args: string[]) => parseArgs({ args, strict: true, allowPositionals: true, options: operator });

  return {
    'support:list': async (db, args) => {
      const { values } = parseArgs({ args, strict: true, options: { ...operator, all: { type: 'boolean' } } });
      return listSupportQueue(db, who(values), { all: Boolean(values.all) });
    },
    'support:show': async (db, args) => {
      const { values, positionals } = parseArgs({ args, strict: true, allowPositionals: true, options: { ...operator, page: { type: 'string' } } });
      const usage = 'usage: support:show <account id> [--page n] [--operator <name>]';
      const page = Number(values.page ?? 1);
      if (!Number.isInteger(page) || page < 1) throw new Error(usage);
      return showSupport(db, who(values), accountOf(positionals[0], usage), page);
    },
    'support:reply': async (db, args) => {
      const { values, positionals } = parseArgs({
        args,
        strict: true,
        allowPositionals: true,
        options: { ...operator, file: { type: 'string', multiple: true } },
      });
      const usage = 'usage: support:reply <account id> <text> [--file <path>]... [--operator <name>]';
      const accountId = accountOf(positionals[0], usage);
      const files = values.file ?? [];
      if (positionals.length < 2 && !files.length) throw new Error(usage);
      return replySupport(context(db), who(values), accountId, positionals.slice(1).join(' '), files);
    },
    'support:close': async (db, args) => {
      const { values, positionals } = parse(args);
      return closeSupport(db, who(values), accountOf(positionals[0], 'usage: support:close <account id> [--operator <name>]'));
    },
    'support:file': async (db, args) => {
      const { values, positionals } = parse(args);
      if (!positionals[0] || !positionals[1]) throw new Error('usage: support:file <file id> <save to path> [--operator <name>]');
      return saveSupportFile(context(db), who(values), positionals[0], positionals[1]);
    },
    'chat:reports': async (db, args) => {
      const { values } = parse(args);
      return listReports(db, who(values));
    },
  };
}

export const CHAT_COMMANDS = makeChatCommands(loadConfig);
