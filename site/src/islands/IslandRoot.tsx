import { Component, createContext, useCallback, useContext, useMemo, type ErrorInfo, type ReactNode } from 'react';
import i18next, { type i18n } from 'i18next';
import { I18nextProvider, initReactI18next, useTranslation } from 'react-i18next';
import type { TKeyTranslate } from '../lib/field-errors.ts';
import { MISSING_KEY_MESSAGE, type TLocale } from '@obmen/shared/constants';
import { DEFAULT_TIME_ZONE, displayDateTime, type TDateStyle } from '@obmen/shared/format';
import { reportFrontError } from '../lib/logger.ts';

/**
 * `timeZone`: the reader's zone as the server rendered the page with it (Astro.locals.timeZone),
 * so an island's first render in the browser prints the same times as the server did.
 */
export type TIslandProps = { locale: TLocale; messages: Record<string, string>; timeZone?: string };

const DateContext = createContext<{ locale: TLocale; timeZone: string }>({ locale: 'ru', timeZone: DEFAULT_TIME_ZONE });

/** Times in an island: the shared formatter with the island's locale and the page's zone. */
/** The islands' t() with the pages' signature (only keys of the dictionaries), for the helpers both share. */
export function useKeyTranslate(): TKeyTranslate {
  const { t } = useTranslation();
  return useCallback((key, vars) => t(key, vars ?? {}), [t]);
}

export function useDisplayDateTime(): (iso: string, style?: TDateStyle) => string {
  const { locale, timeZone } = useContext(DateContext);
  return useCallback((iso: string, style?: TDateStyle) => displayDateTime(iso, locale, timeZone, style), [locale, timeZone]);
}

const instances = new Map<TLocale, i18n>();

/** One i18next instance per locale for all islands of a page; each island adds its strings. */
function getI18n(locale: TLocale, messages: Record<string, string>): i18n {
  let instance = instances.get(locale);
  if (!instance) {
    instance = i18next.createInstance();
    void instance.use(initReactI18next).init({
      lng: locale,
      resources: { [locale]: { translation: {} } },
      keySeparator: false,
      nsSeparator: false,
      interpolation: { escapeValue: false },
      initAsync: false,
      saveMissing: true,
      missingKeyHandler: (_lngs, _ns, key) => {
        if (typeof window !== 'undefined') reportFrontError({ type: 'i18n', message: MISSING_KEY_MESSAGE, stack: key });
      },
    });
    instances.set(locale, instance);
  }
  instance.addResources(locale, 'translation', messages);
  return instance;
}

type TBoundaryState = { failed: boolean };

/** An island that throws shows a short apology instead of taking the page down, and is reported. */
class IslandBoundary extends Component<{ children: ReactNode; fallback: string }, TBoundaryState> {
  override state: TBoundaryState = { failed: false };
  static getDerivedStateFromError(): TBoundaryState {
    return { failed: true };
  }
  override componentDidCatch(error: Error, info: ErrorInfo) {
    reportFrontError({ type: 'react', message: error.message, stack: `${error.stack ?? ''}\n${info.componentStack ?? ''}` });
  }
  override render() {
    return this.state.failed ? (
      <p role="alert" className="island-error">
        {this.props.fallback}
      </p>
    ) : (
      this.props.children
    );
  }
}

export function IslandRoot({ locale, messages, timeZone = DEFAULT_TIME_ZONE, children }: TIslandProps & { children: ReactNode }) {
  const instance = useMemo(() => getI18n(locale, messages), [locale, messages]);
  const dates = useMemo(() => ({ locale, timeZone }), [locale, timeZone]);
  return (
    <I18nextProvider i18n={instance}>
      <DateContext.Provider value={dates}>
        <IslandBoundary fallback={messages['error.generic'] ?? 'Error'}>{children}</IslandBoundary>
      </DateContext.Provider>
    </I18nextProvider>
  );
}
