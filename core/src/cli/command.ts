import { translate } from '@obmen/shared';
import type { Db } from '../db/index.ts';
import { AppError } from '../errors.ts';

/** One operator command: its arguments in, a JSON-printable answer out (core/src/cli.ts prints it). */
export type TCommand = (db: Db, args: string[]) => Promise<unknown>;

/** key=value arguments → an object; anything else is a usage error. */
export function options(args: string[], allowed: string[], usage: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const arg of args) {
    const at = arg.indexOf('=');
    const key = at > 0 ? arg.slice(0, at) : '';
    if (!allowed.includes(key)) throw new Error(`unknown option "${arg}"\n${usage}`);
    out[key] = arg.slice(at + 1);
  }
  return out;
}

/** An AppError reads as its English message (with the offending fields) on the operator's terminal. */
export function readable(command: TCommand): TCommand {
  return async (db, args) => {
    try {
      return await command(db, args);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      const fields = Object.entries(err.fields ?? {}).map(([field, key]) => `${field}: ${translate('en', key)}`);
      throw new Error([`${err.code}: ${translate('en', err.messageKey, err.vars)}`, ...fields].join('\n'));
    }
  };
}
