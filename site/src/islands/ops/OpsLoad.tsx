import { useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../../lib/api.ts';
import { FormError } from '../FormParts.tsx';

/*
 * What every back-office island does with an /api/ops answer it cannot use: the core hides
 * /api/ops from anyone without an operator's session (404 `route_not_found`: back to the
 * sign-in), refuses a role without the permission (403 `ops_forbidden`: the "not your role"
 * state, already in the audit trail), and says anything else in the operator's language.
 */

export const OPS_LOGIN_PATH = '/ops/login';

export type TOpsFailure = { forbidden: boolean; message: string };

export function opsFailure(err: unknown, generic: string): TOpsFailure {
  if (err instanceof ApiError && err.status === 404 && err.code === 'route_not_found') window.location.replace(OPS_LOGIN_PATH);
  if (err instanceof ApiError) return { forbidden: err.code === 'ops_forbidden', message: err.message };
  return { forbidden: false, message: generic };
}

/** Loads on arrival (and again on `reload`): the data, or why not. `load` must be stable (useCallback). */
export function useOpsLoad<T>(load: () => Promise<T>) {
  const { t } = useTranslation();
  // A load may be audited (a customer's page is a view): keyed to `load` only, not to `t`'s identity.
  const generic = useRef('');
  generic.current = t('error.generic');
  const [data, setData] = useState<T | null>(null);
  const [failure, setFailure] = useState<TOpsFailure | null>(null);
  const reload = useCallback(async () => {
    try {
      setData(await load());
      setFailure(null);
    } catch (err) {
      setFailure(opsFailure(err, generic.current));
    }
  }, [load]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, failure, reload };
}

/** The page's state while it has nothing to show: loading, not this role's, or the refusal. */
export function OpsLoadState({ failure }: { failure: TOpsFailure | null }) {
  const { t } = useTranslation();
  if (!failure)
    return (
      <p className="ops-wait" role="status">
        {t('ops.loading')}
      </p>
    );
  if (failure.forbidden)
    return (
      <div className="ops-forbidden" data-testid="ops-forbidden">
        <h2>{t('ops.forbidden_title')}</h2>
        {/* The page's language: the core answers in the operator's, which may differ from the page's. */}
        <p>{t('ops.forbidden')}</p>
        <a className="btn btn-outline" href="/ops">
          {t('ops.nav_home')}
        </a>
      </div>
    );
  return <FormError text={failure.message} testId="ops-load-error" />;
}

/** A waiting time as the queues show it: days and hours, hours and minutes, or minutes. */
export function useDuration(): (ms: number) => string {
  const { t } = useTranslation();
  return useCallback(
    (ms: number) => {
      const minutes = Math.floor(ms / 60_000);
      const days = Math.floor(minutes / 1440);
      const hours = Math.floor((minutes % 1440) / 60);
      if (days > 0) return hours ? t('ops.duration_dh', { d: days, h: hours }) : t('ops.duration_d', { d: days });
      if (hours > 0) return t('ops.duration_hm', { h: hours, m: minutes % 60 });
      return t('ops.duration_m', { m: minutes });
    },
    [t],
  );
}

/** A failed action's message for the form that sent it (a lost session still goes to the sign-in). */
export const opsMessage = (err: unknown, generic: string): string => opsFailure(err, generic).message;
