import type { Ref } from 'react';
import { useTranslation } from 'react-i18next';

/** The secret in groups of four, as people copy it by hand. */
function grouped(secret: string): string {
  return secret.match(/.{1,4}/g)?.join(' ') ?? secret;
}

/**
 * A new TOTP secret to enrol: its QR code and the secret to copy by hand (the customer's security
 * page and an operator's enrolment), with the otpauth URI where `uri` is given.
 */
export function TotpScan({
  qr,
  secret,
  uri,
  testIdPrefix,
  scanRef,
}: {
  qr: { size: number; path: string };
  secret: string;
  uri?: string;
  testIdPrefix: string;
  /** Where focus goes when the step appears. */
  scanRef?: Ref<HTMLDivElement>;
}) {
  const { t } = useTranslation();
  return (
    <div ref={scanRef} tabIndex={scanRef ? -1 : undefined} className="tfa-scan">
      <svg
        className="tfa-qr"
        viewBox={`0 0 ${qr.size} ${qr.size}`}
        role="img"
        aria-label={t('securitypage.qr_label')}
        shapeRendering="crispEdges"
        data-testid={`${testIdPrefix}-qr`}
      >
        <rect width={qr.size} height={qr.size} fill="#fff" />
        <path d={qr.path} fill="#000" />
      </svg>
      <div className="tfa-manual">
        <p>{t('securitypage.scan_lead')}</p>
        <p>
          {t('securitypage.secret_label')}{' '}
          <code className="tfa-secret" data-testid={`${testIdPrefix}-secret`} data-secret={secret}>
            {grouped(secret)}
          </code>
        </p>
        {uri && (
          <details>
            <summary>{t('securitypage.uri_label')}</summary>
            <code className="tfa-uri" data-testid={`${testIdPrefix}-uri`}>
              {uri}
            </code>
          </details>
        )}
      </div>
    </div>
  );
}
