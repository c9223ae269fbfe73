import type { TCommand } from './command.ts';
import { SITE_COMMANDS } from './site.ts';
import { CONTENT_COMMANDS } from './content.ts';
import { NOTIFY_COMMANDS } from './notifications.ts';
import { RATES_COMMANDS } from './rates.ts';
import { TRANSFER_COMMANDS } from './transfer.ts';
import { LEDGER_COMMANDS } from './ledger.ts';
import { VERIFICATION_COMMANDS } from './verification.ts';
import { PAYMENT_COMMANDS } from './payments.ts';
import { WITHDRAW_COMMANDS } from './withdraw.ts';
import { REFERRAL_COMMANDS } from './referral.ts';
import { CARD_COMMANDS } from './cards.ts';
import { CHAT_COMMANDS } from './chat.ts';
import { SEED_COMMANDS } from './seed.ts';
import { AUDIT_COMMANDS } from './audit.ts';
import { OPS_COMMANDS } from './ops.ts';

/** Every operator command by name, one file per domain. */
export const COMMANDS: Record<string, TCommand> = {
  ...SITE_COMMANDS,
  ...CONTENT_COMMANDS,
  ...NOTIFY_COMMANDS,
  ...RATES_COMMANDS,
  ...TRANSFER_COMMANDS,
  ...LEDGER_COMMANDS,
  ...VERIFICATION_COMMANDS,
  ...PAYMENT_COMMANDS,
  ...WITHDRAW_COMMANDS,
  ...REFERRAL_COMMANDS,
  ...CARD_COMMANDS,
  ...CHAT_COMMANDS,
  ...SEED_COMMANDS,
  ...AUDIT_COMMANDS,
  ...OPS_COMMANDS,
};
