import { userInfo } from 'node:os';
import type { Db } from '../db/index.ts';

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

/** A listing's limit=<n> argument: 1..1000, 50 when absent. */
export function limitOf(value: string | undefined, usage: string): number {
  const count = value === undefined ? 50 : Number(value);
  if (!Number.isInteger(count) || count < 1 || count > 1000) throw new Error(usage);
  return count;
}

/** Who is acting, for the audit trail: --operator, else OBMEN_OPERATOR, else the login name. */
export function operatorOf(value: string | undefined): string {
  const name = (value ?? process.env.OBMEN_OPERATOR ?? userInfo().username).trim();
  if (!name) throw new Error('say who you are: --operator <name> or OBMEN_OPERATOR');
  return name;
}
