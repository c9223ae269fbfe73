import { loadConfig } from '../config.ts';
import { createOperator, disableOperator, listOperators, OPS_ENROL_TTL_MS } from '../domains/ops/service.ts';
import { operatorOf, type TCommand } from './command.ts';

const CREATE_USAGE = 'usage: operator:create <email> <role>... [--operator <name>]  (roles: support, compliance, finance, content, admin)';

/** Positional arguments and the optional --operator <name> that says who runs the command. */
function split(args: string[]): { positionals: string[]; actor: string } {
  const at = args.indexOf('--operator');
  const named = at >= 0 ? args[at + 1] : undefined;
  const positionals = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
  return { positionals, actor: `cli:${operatorOf(named)}` };
}

/**
 * The back office's operators: operator:create prints the one-time enrolment link (a password
 * and a second factor are set there, nothing works before), operator:list, operator:disable.
 */
export const OPS_COMMANDS: Record<string, TCommand> = {
  'operator:create': async (db, args) => {
    const { positionals, actor } = split(args);
    const [email, ...roles] = positionals;
    if (!email?.includes('@') || roles.length === 0) throw new Error(CREATE_USAGE);
    const created = await createOperator(db, { email, roles, actor, now: new Date() });
    return { email: created.email, enrol_link: `${loadConfig().PUBLIC_URL}/ops/enrol#${created.token}`, valid_hours: OPS_ENROL_TTL_MS / 3_600_000 };
  },
  'operator:list': (db) => listOperators(db),
  'operator:disable': async (db, args) => {
    const { positionals, actor } = split(args);
    if (positionals.length !== 1) throw new Error('usage: operator:disable <email> [--operator <name>]');
    return disableOperator(db, positionals[0]!, actor, new Date());
  },
};
