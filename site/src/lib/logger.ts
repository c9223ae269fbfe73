/** Front-end errors go to the BFF's logger endpoint; never throws, never blocks the page. */
export type TFrontError = { type: 'react' | 'window' | 'unhandledrejection' | 'i18n' | 'other'; message: string; stack?: string };

export function reportFrontError(error: TFrontError): void {
  const payload = JSON.stringify({
    ...error,
    url: window.location.href,
    user_agent: navigator.userAgent,
    time: new Date().toISOString(),
  });
  try {
    const sent = navigator.sendBeacon?.('/api/logger/front', new Blob([payload], { type: 'application/json' }));
    if (!sent)
      void fetch('/api/logger/front', { method: 'POST', body: payload, headers: { 'content-type': 'application/json' }, keepalive: true }).catch(() => {});
  } catch {
    // Reporting must never become the error.
  }
}
