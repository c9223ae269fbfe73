import { THEME_COLORS, THEME_COOKIE, THEME_COOKIE_MAX_AGE_S, isTheme, themeAttribute, type TTheme } from '@obmen/shared/theme';

/** The cookie the server reads on the next request (so it renders that theme from the first byte). */
export function themeCookie(theme: TTheme, https: boolean): string {
  return `${THEME_COOKIE}=${theme}; path=/; max-age=${THEME_COOKIE_MAX_AGE_S}; samesite=lax${https ? '; secure' : ''}`;
}

/** This page in the chosen theme at once: what the server will write on the next one. */
export function applyTheme(doc: Document, theme: TTheme): void {
  const attribute = themeAttribute(theme);
  if (attribute) doc.documentElement.dataset.theme = attribute;
  else delete doc.documentElement.dataset.theme;
  for (const meta of doc.querySelectorAll<HTMLMetaElement>('meta[data-theme-color]')) {
    const scheme = meta.dataset.themeColor === 'dark' ? 'dark' : 'light';
    meta.content = THEME_COLORS[attribute ?? scheme];
  }
  for (const button of doc.querySelectorAll<HTMLButtonElement>('[data-theme-choice]')) {
    button.setAttribute('aria-pressed', String(button.dataset.themeChoice === theme));
  }
}

/** The header's light / dark / system switch (ThemeSwitch.astro), in the header and the burger menu. */
export function initThemeSwitch(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-theme-choice]')) {
    button.addEventListener('click', () => {
      const theme = button.dataset.themeChoice;
      if (!isTheme(theme)) return;
      document.cookie = themeCookie(theme, window.location.protocol === 'https:');
      applyTheme(document, theme);
    });
  }
}
