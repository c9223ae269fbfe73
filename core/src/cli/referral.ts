import { loadConfig } from '../config.ts';
import { listReferralRefusals, operatorTerms, setReferralTerms, settleReferralBonuses } from '../domains/referral/service.ts';
import { options, type TCommand } from './command.ts';

const TERMS_USAGE = `usage: referral:terms [share=<fraction of each fee>] [currency=<payout currency>] [hold=<14d|36h|90m|30s|seconds>]
    [min=<minimum payout, in the payout currency>] [enabled=true|false] [same_ip_days=<days, 0: off>]
  e.g. referral:terms share=0.2 currency=USDT hold=14d min=1 same_ip_days=30`;

/** Referral programme operator commands. */
export const REFERRAL_COMMANDS: Record<string, TCommand> = {
  'referral:terms': async (db, args) => {
    if (!args.length) return (await operatorTerms(db)) ?? { terms: 'none: the programme is off until share and currency are set' };
    return setReferralTerms(db, options(args, ['share', 'currency', 'hold', 'min', 'enabled', 'same_ip_days'], TERMS_USAGE));
  },
  /** Sign-ups whose valid invite code bound nobody, and why (same_ip), newest first. */
  'referral:refusals': async (db) => ({ refusals: await listReferralRefusals(db) }),
  /** What the referral-settlement job (core/src/jobs) does every 10 minutes, now. */
  'referral:settle': async (db) => ({ settled: await settleReferralBonuses({ db, publicUrl: loadConfig().PUBLIC_URL }, new Date()) }),
};
