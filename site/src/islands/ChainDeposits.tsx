import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { TDepositAddress, TLocale, TPaymentRecord } from '@obmen/shared';
import { displayAmount } from '@obmen/shared/format';
import { api } from '../lib/api.ts';
import { CALLS } from '@obmen/shared/calls';
import { IslandRoot, type TIslandProps } from './IslandRoot.tsx';
import { PaymentState, refreshWallets, usePolling } from './DepositStatus.tsx';

type TProps = TIslandProps & { address: TDepositAddress; items: TPaymentRecord[] };

/** The deposits of this system and currency (the address's), newest first, as the history gives them. */
const ofAddress = (address: TDepositAddress, items: TPaymentRecord[]) => items.filter((item) => item.ps === address.ps);

/**
 * /deposit/form/{chain system}/{currency}: the user's address with its QR code and a copy
 * button, and the transactions sent to it: each appears when the network sees it and shows its
 * confirmations until it is credited (the list is asked for again every few seconds).
 */
function ChainDepositsBody({ address, items: initial, locale }: { address: TDepositAddress; items: TPaymentRecord[]; locale: TLocale }) {
  const { t } = useTranslation();
  const [items, setItems] = useState(() => ofAddress(address, initial));
  const [copied, setCopied] = useState(false);
  usePolling(true, async () => {
    const answer = await api(CALLS['GET /api/deposit/history'], { query: { currency: address.currency, per_page: 10 } });
    const next = ofAddress(address, answer.items);
    const credited = (list: TPaymentRecord[]) => list.filter((item) => item.state === 'credited').length;
    if (credited(next) > credited(items)) await refreshWallets();
    setItems(next);
  });

  async function copy() {
    await navigator.clipboard.writeText(address.address);
    setCopied(true);
  }

  return (
    <>
      <section className="dp-address-box" data-testid="deposit-address-box">
        <h2>{t('deposit.address_title', { currency: address.currency })}</h2>
        <img
          className="dp-qr"
          src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(address.qr_svg)}`}
          alt={t('deposit.qr_alt', { address: address.address })}
          width="176"
          height="176"
          data-testid="deposit-qr"
        />
        <p className="dp-code dp-address" data-testid="deposit-address">
          {address.address}
        </p>
        <button type="button" className="btn btn-outline" onClick={copy} data-testid="deposit-copy">
          {t('deposit.copy')}
        </button>
        <span className="dp-copied" role="status">
          {copied ? t('deposit.copied') : ''}
        </span>
        <p className="muted">{t('deposit.address_note', { min: displayAmount(address.min, locale), currency: address.currency, n: address.confirmations })}</p>
      </section>
      <section className="dp-recent" data-testid="deposit-recent">
        <h2>{t('deposit.recent_title')}</h2>
        {items.length === 0 ? (
          <p className="muted">{t('deposit.recent_none')}</p>
        ) : (
          <ul className="dp-list">
            {items.map((item) => (
              <li key={item.id} data-testid="deposit-tx" data-id={item.id} data-state={item.state}>
                <strong>
                  {displayAmount(item.amount, locale)} {item.currency}
                </strong>
                <PaymentState payment={item} />
                <a href={item.url}>{t('deposit.details')}</a>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

export default function ChainDeposits({ locale, messages, ...props }: TProps) {
  return (
    <IslandRoot locale={locale} messages={messages}>
      <ChainDepositsBody locale={locale} {...props} />
    </IslandRoot>
  );
}
