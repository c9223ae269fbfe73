import { loadConfig } from '../config.ts';
import { referralTerms, setReferralTerms, settleReferralBonuses } from '../domains/referral/service.ts';
import { options, type TCommand } from './command.ts';

const TERMS_USAGE = `usage: referral:terms [share=<fraction of each fee>] [currency=<payout currency>] [hold=<14d|36h|90m|30s|seconds>]
    [min=<minimum payout, in the payout currency>] [enabled=true|false]
  e.g. referral:terms share=0.2 currency=USDT hold=14d min=1`;

/** Referral programme operator commands. */
export const REFERRAL_COMMANDS: Record<string, TCommand> = {
  'referral:terms': async (db, args) => {
    if (!args.length) return (await referralTerms(db)) ?? { terms: 'none: the programme is off until share and currency are set' };
    return setReferralTerms(db, options(args, ['share', 'currency', 'hold', 'min', 'enabled'], TERMS_USAGE));
  },
  /** What the housekeeping job does every 10 minutes, now. */
  'referral:settle': async (db) => ({ settled: await settleReferralBonuses({ db, publicUrl: loadConfig().PUBLIC_URL }, new Date()) }),
};
