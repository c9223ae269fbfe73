import { parseArgs } from 'node:util';
import { LIMIT_OPERATIONS, REJECT_REASONS, VERIFICATION_SIDES, ZLevelLimitInput, type TRejectReason, type TVerificationSide } from '@obmen/shared';
import { loadConfig, type TConfig } from '../config.ts';
import type { Db } from '../db/index.ts';
import { openStorage } from '../storage/index.ts';
import { openDocumentCipher } from '../domains/verification/cipher.ts';
import { approveSubmission, listQueue, rejectSubmission, saveFile, showSubmission } from '../domains/verification/operator.ts';
import { writeAudit } from '../domains/audit/service.ts';
import { listLimits, setLevelLimit } from '../domains/limits/service.ts';
import type { TVerificationContext } from '../domains/verification/service.ts';
import { operatorOf, type TCommand } from './command.ts';

const LIMITS_USAGE = `usage: kyc:limits:set <level 0|1> <${LIMIT_OPERATIONS.join('|')}> <currency> <per 24 h> <per 30 days> [--as <name>]
  amounts in major units of the currency, e.g. kyc:limits:set 1 withdrawal USD 20000 100000`;

const REJECT_USAGE = `usage: kyc:reject <submission id> --file <side>=<reason>[:<note>]... (--retry | --final) [--note <text>] [--as <name>]
  sides: ${VERIFICATION_SIDES.join(', ')}; reasons: ${REJECT_REASONS.join(', ')} (other needs a note)
  --retry: the user may upload the rejected files again; --final: this submission is closed for good`;

/**
 * Identity verification for operators: kyc:queue, kyc:show, kyc:file, kyc:approve, kyc:reject,
 * kyc:limits, kyc:limits:set. They call the back office's services, and every look and every decision goes to
 * the same audit trail as `cli:<name>`: --as <name> (or --operator), else OBMEN_OPERATOR, else $USER.
 */
export function makeVerificationCommands(getConfig: () => TConfig): Record<string, TCommand> {
  const context = (db: Db): TVerificationContext => {
    const config = getConfig();
    return {
      db,
      storage: openStorage(config),
      cipher: openDocumentCipher(config, (msg) => console.error(msg)),
      publicUrl: config.PUBLIC_URL,
      now: () => new Date(),
    };
  };
  const actorOptions = { as: { type: 'string' }, operator: { type: 'string' } } as const;
  const withOperator = (args: string[]) => parseArgs({ args, strict: true, allowPositionals: true, options: actorOptions });
  const by = (values: { as?: string; operator?: string }) => ({ actor: `cli:${operatorOf(values.as ?? values.operator)}` });

  return {
    'kyc:queue': async (db, args) => {
      const { values } = withOperator(args);
      return listQueue(db, by(values));
    },
    'kyc:show': async (db, args) => {
      const { values, positionals } = withOperator(args);
      if (!positionals[0]) throw new Error('usage: kyc:show <submission id> [--as <name>]');
      return showSubmission(context(db), by(values), positionals[0]);
    },
    'kyc:file': async (db, args) => {
      const { values, positionals } = withOperator(args);
      if (!positionals[0] || !positionals[1]) throw new Error('usage: kyc:file <file id> <save to path> [--as <name>]');
      return saveFile(context(db), by(values), positionals[0], positionals[1]);
    },
    'kyc:approve': async (db, args) => {
      const { values, positionals } = withOperator(args);
      if (!positionals[0]) throw new Error('usage: kyc:approve <submission id> [--as <name>]');
      return approveSubmission(context(db), by(values), positionals[0]);
    },
    'kyc:reject': async (db, args) => {
      const { values, positionals } = parseArgs({
        args,
        strict: true,
        allowPositionals: true,
        options: {
          file: { type: 'string', multiple: true },
          retry: { type: 'boolean' },
          final: { type: 'boolean' },
          note: { type: 'string' },
          ...actorOptions,
        },
      });
      if (!positionals[0] || !values.file?.length || values.retry === values.final) throw new Error(REJECT_USAGE);
      const files = values.file.map((spec) => {
        const match = /^([a-z]+)=([a-z_]+)(?::(.*))?$/s.exec(spec);
        if (!match) throw new Error(`--file wants <side>=<reason>[:<note>], got: ${spec}\n${REJECT_USAGE}`);
        return { side: match[1] as TVerificationSide, reason: match[2] as TRejectReason, ...(match[3] ? { note: match[3] } : {}) };
      });
      return rejectSubmission(context(db), by(values), positionals[0], {
        files,
        retry: Boolean(values.retry),
        ...(values.note ? { note: values.note } : {}),
      });
    },
    'kyc:limits': (db) => listLimits(db),
    // The setter /ops/config/limits proposes as `limits.level` (four eyes); a shell is trusted as one operator, named on the trail.
    'kyc:limits:set': async (db, args) => {
      const { values, positionals } = withOperator(args);
      const [level, operation, currency, per_24h, per_30d, ...extra] = positionals;
      const input = ZLevelLimitInput.safeParse({ level: Number(level), operation, currency, per_24h, per_30d });
      if (!input.success || extra.length) throw new Error(LIMITS_USAGE);
      return db.transaction(async (tx) => {
        const [before] = await listLimits(tx, input.data);
        const after = await setLevelLimit(tx, input.data);
        await writeAudit(tx, {
          ...by(values),
          action: 'config.limits',
          subject: `limits:${after.level}:${after.operation}`,
          before: before ?? null,
          after,
        });
        return after;
      });
    },
  };
}

export const VERIFICATION_COMMANDS = makeVerificationCommands(loadConfig);
