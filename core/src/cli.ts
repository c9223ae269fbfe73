/**
 * Operator commands, run against the same database as the core; one file per domain in cli/:
 *   node core/src/cli.ts settings                       show site settings
 *   node core/src/cli.ts settings:set <key> <json>      e.g. auth_type '"email"', site_blocked true
 * Site (cli/site.ts): settings, settings:set, site:block, site:unblock.
 * Content (cli/content.ts): menu:list <locale>, menu:set, menu:remove, footer:set, footer:remove,
 *   footer:list, article:set <name> <locale> <title> <file.html|file.md>, article:remove,
 *   article:list, content:version.
 * Notifications (cli/notifications.ts): notify:send, notify:list, notify:delete.
 * Rates (cli/rates.ts): rates:list [SRC/DST], rates:set <SRC> <DST> key=value…, rates:sync (from RATES_FEED_URL).
 * Transfers (cli/transfer.ts): transfer:set <CUR> key=value….
 * Ledger (cli/ledger.ts), four eyes as named operators (--as <e-mail>): balance:credit|balance:debit
 *   <account_id> <CUR> <amount> <memo…> and ledger:reverse <transaction id> <memo…> propose;
 *   request:list, request:approve|decline|withdraw <request id>; ledger:check.
 * Identity (cli/verification.ts): kyc:queue, kyc:show <id>, kyc:file <file id> <path>,
 *   kyc:approve <id>, kyc:reject <id> --file side=reason[:note]… --retry|--final, kyc:limits,
 *   kyc:limits:set <level> <operation> <currency> <per 24 h> <per 30 days>.
 * Referral (cli/referral.ts): referral:terms [share= currency= hold= min= enabled=], referral:settle.
 * Cards (cli/cards.ts): cards:products, cards:product:create|price|enable|disable, cards:orders,
 *   cards:order:show <id>, cards:issuer, cards:issuer:advance [at=…], cards:callbacks, cards:callback:replay <id>.
 * Support (cli/chat.ts): support:list [--all], support:show <account id>, support:reply <account id>
 *   <text> [--file path]…, support:close <account id>, support:file <file id> <path>, chat:reports.
 * Withdrawals (cli/withdraw.ts): withdraw:list [state=…], withdraw:approve <id> --as <e-mail> (a large
 *   one becomes a request), withdraw:reject <id> <reason> [words…] --as, withdraw:retry|fail <id> --as,
 *   withdraw:auto <CUR> <amount>, withdraw:large <CUR> <amount>, payouts:sandbox [id=<id>] [outcome=succeeded|failed],
 *   payments:reconcile from=<day> to=<day> [provider=<id>] (differences kept in the suspense list).
 * Audit (cli/audit.ts): audit:verify [file.jsonl] (the hash chain, in the database or an export,
 *   offline), audit:export <file.jsonl> [from= to= actor= subject= action=].
 * Operators (cli/ops.ts): operator:create <email> <role…> (prints the one-time enrolment link),
 *   operator:list, operator:disable <email>.
 * Seed (cli/seed.ts): seed — the catalogue of an empty database (currencies, settings, menus,
 *   articles, rates, limits; sandbox systems where sandboxes may run), the demo account outside
 *   production, its balances and sign-in in development. The start scripts run it when SEED is on.
 * Run a command without arguments for its usage.
 * DATABASE_URL / DATA_DIR select the database as for the server.
 */
import { z } from 'zod';
import { isI18nKey, translate } from '@obmen/shared';
import { loadConfig } from './config.ts';
import { openDb } from './db/index.ts';
import { migrate } from './db/migrate.ts';
import { COMMANDS } from './cli/index.ts';
import { registerPaymentProviders } from './domains/payments/providers.ts';
import { loadPaymentProviders } from './providers/index.ts';
import { AppError } from './errors.ts';

/** A failure on the operator's terminal: an AppError as its code and English message, with the offending fields. */
function describe(err: unknown): string {
  if (err instanceof z.ZodError) return z.prettifyError(err);
  if (!(err instanceof AppError)) return (err as Error).message;
  const fields = Object.entries(err.fields ?? {}).map(([field, key]) => `${field}: ${isI18nKey(key) ? translate('en', key) : key}`);
  return [err.message, ...fields].join('\n');
}

const [name = '', ...args] = process.argv.slice(2);
const command = COMMANDS[name];
if (!command) {
  console.error(`commands: ${Object.keys(COMMANDS).join(', ')}`);
  process.exit(2);
}
const config = loadConfig();
// The commands that open, pay or price payments reach the providers through their adapters.
registerPaymentProviders(loadPaymentProviders(config));
const db = await openDb(config, { error: (obj, msg) => console.error(msg, obj), warn: (obj, msg) => console.error(msg, obj), info: () => {} });
try {
  await migrate(db);
  console.log(JSON.stringify(await command(db, args), null, 2));
} catch (err) {
  console.error(describe(err));
  process.exitCode = 1;
} finally {
  await db.close();
}
