import type { TFunction } from 'i18next';
import { ApiError } from '../../lib/api.ts';
import { OPS_LOGIN_PATH } from '../../lib/ops-page.ts';

/**
 * What a failed back-office call means to the operator: the core hides /api/ops from anyone
 * without a live ops session (404: off to the sign-in); any other failure is the core's message.
 */
export function opsFailure(err: unknown, t: TFunction): string {
  if (err instanceof ApiError && err.status === 404 && err.code === 'route_not_found') {
    window.location.replace(OPS_LOGIN_PATH);
    return '';
  }
  return err instanceof ApiError ? err.message : t('error.generic');
}
