import { useTranslation } from 'react-i18next';
import { displayMoney } from '@obmen/shared/format';
import type { TConfigSetting } from '@obmen/shared/ops-config';
import type { TLedgerAdjustmentReason, TOpsRequest } from '@obmen/shared/ops-requests';

/** The request's parameters as one line (`roles: support, compliance`). */
const paramsText = (params: Record<string, unknown>) =>
  Object.entries(params)
    .map(([name, value]) => `${name}: ${Array.isArray(value) ? value.join(', ') || '—' : String(value)}`)
    .join('; ');

/** What a request would do, in words: money in the operator's language, anything else as its parameters. */
export function useRequestText(): (request: Pick<TOpsRequest, 'action' | 'params'>) => string {
  const { t, i18n } = useTranslation();
  const locale = i18n.language === 'en' ? 'en' : 'ru';
  return ({ action, params }) => {
    const text = (name: string) => String(params[name] ?? '');
    switch (action) {
      case 'ledger.adjust':
        return t(`ops.adjust_text.${text('direction') === 'debit' ? 'debit' : 'credit'}`, {
          amount: displayMoney(text('amount').replace(',', '.'), text('currency'), locale),
          account: text('account_id'),
          reason: t(`ops.adjustment.${text('reason') as TLedgerAdjustmentReason}`),
          memo: text('memo'),
        });
      case 'ledger.reverse':
        return t('ops.reverse_text', { transaction: text('transaction_id'), account: text('account_id'), memo: text('memo') });
      case 'withdrawals.approve_large':
        return t('ops.approve_large_text', { id: text('withdrawal_id') });
      case 'payments.match':
        return t('ops.pay_match_text', {
          id: text('bank_payment_id'),
          deposit: text('deposit_id'),
          amount: displayMoney(text('amount'), text('currency'), locale),
          expected: displayMoney(text('expected'), text('currency'), locale),
        });
      case 'config.change': {
        const value = params.value;
        if (text('setting') === 'cards.price' && typeof value === 'object' && value !== null) {
          const price = value as Record<string, string | undefined>;
          const fee = (amount: string | undefined) => (amount === undefined ? undefined : displayMoney(amount, price.fee_currency ?? '', locale).trim());
          const changes = [
            ['cards_issue_fee', fee(price.issue_fee)],
            ['cards_monthly_fee', fee(price.monthly_fee)],
            ['cards_limits', price.limits],
          ]
            .filter(([, said]) => said !== undefined)
            .map(([label, said]) => `${t(`ops.config.${label as 'cards_limits'}`)}: ${said}`);
          return t('ops.config.cards_price_text', { id: price.id ?? '', changes: changes.join('; ') || '—' });
        }
        if (text('setting') === 'limits.level' && typeof value === 'object' && value !== null) {
          const limit = value as Record<string, string | number>;
          const currency = String(limit.currency ?? '').toUpperCase();
          return t('ops.config.limits_text', {
            level: limit.level ?? '',
            operation: t(`ops.config.limits_operation_${limit.operation as 'deposit'}`),
            per_24h: displayMoney(String(limit.per_24h ?? ''), currency, locale),
            per_30d: displayMoney(String(limit.per_30d ?? ''), currency, locale),
          });
        }
        const withdrawal = (text('setting') === 'withdraw.large' || text('setting') === 'withdraw.auto') && typeof value === 'object' && value !== null;
        const amount = value as Record<string, string>;
        return t('ops.config.change_text', {
          setting: t(`ops.config.setting.${text('setting') as TConfigSetting}`),
          value: withdrawal
            ? displayMoney(amount.amount ?? '', (amount.currency ?? '').toUpperCase(), locale)
            : typeof value === 'object' && value !== null
              ? paramsText(value as Record<string, unknown>)
              : String(value),
        });
      }
      default:
        return paramsText(params);
    }
  };
}
