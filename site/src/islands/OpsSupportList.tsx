import { useTranslation } from 'react-i18next';
import type { TOpsSupportItem } from '@obmen/shared/ops-support';
import { useDisplayDateTime } from './IslandRoot.tsx';
import { useDuration } from './ops/OpsLoad.tsx';

/** Who holds the conversation: the operator themselves (until when), a colleague, or nobody. */
export function ClaimNote({ item }: { item: TOpsSupportItem }) {
  const { t } = useTranslation();
  const when = useDisplayDateTime();
  if (!item.claim) return null;
  return (
    <p className={`desk-claim ${item.claim.mine ? 'desk-claim-mine' : 'desk-claim-other'}`} data-testid="desk-claim-note">
      {item.claim.mine
        ? t('ops.support_claimed_me', { time: when(item.claim.lapses_at, 'time') })
        : t('ops.support_claimed_by', { operator: item.claim.operator })}
    </p>
  );
}

/** How long the customer has waited against the first-response target. */
export function Waited({ item, targetMs }: { item: TOpsSupportItem; targetMs: number }) {
  const { t } = useTranslation();
  const duration = useDuration();
  if (item.waited_ms === null) return <span className="desk-waited">{t('ops.support_answered')}</span>;
  return (
    <span className={`desk-waited ${item.overdue ? 'desk-overdue' : ''}`} data-testid="desk-waited">
      {t('ops.support_waited', { waited: duration(item.waited_ms), target: duration(targetMs) })}
      {item.overdue && <strong className="desk-overdue-mark"> · {t('ops.support_overdue')}</strong>}
    </span>
  );
}

type TProps = {
  items: TOpsSupportItem[];
  targetMs: number;
  selected: number | null;
  onOpen: (accountId: number) => void;
};

/** The conversations, longest waiting first; each opens on click or Enter. */
export function OpsSupportList({ items, targetMs, selected, onOpen }: TProps) {
  const { t } = useTranslation();
  if (!items.length)
    return (
      <p className="desk-empty" data-testid="desk-empty">
        {t('ops.support_empty')}
      </p>
    );
  return (
    <ul className="desk-list" aria-label={t('ops.support_list_label')} data-testid="desk-list">
      {items.map((item) => (
        <li key={item.account_id}>
          <button
            type="button"
            className={`desk-item ${item.account_id === selected ? 'desk-item-open' : ''}`}
            aria-current={item.account_id === selected ? 'true' : undefined}
            onClick={() => onOpen(item.account_id)}
            data-testid="desk-item"
            data-account={item.account_id}
          >
            <span className="desk-item-head">
              <span className="desk-account">{t('ops.support_account', { id: item.account_id })}</span>
              {item.unread > 0 && <span className="desk-new">{t('ops.support_new', { count: item.unread })}</span>}
            </span>
            <Waited item={item} targetMs={targetMs} />
            {item.last_message && <span className="desk-last">{item.last_message}</span>}
            <ClaimNote item={item} />
          </button>
        </li>
      ))}
    </ul>
  );
}
