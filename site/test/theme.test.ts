// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { THEME_COLORS } from '@obmen/shared/theme';
import { applyTheme, initThemeSwitch, themeCookie } from '../src/scripts/theme.ts';

/** What ThemeSwitch.astro and HeadBasics.astro render, without a choice. */
function renderHead() {
  document.head.innerHTML = `
    <meta name="theme-color" media="(prefers-color-scheme: light)" content="${THEME_COLORS.light}" data-theme-color="light">
    <meta name="theme-color" media="(prefers-color-scheme: dark)" content="${THEME_COLORS.dark}" data-theme-color="dark">`;
  document.body.innerHTML = ['light', 'dark', 'system']
    .map((code) => `<button type="button" data-theme-choice="${code}" aria-pressed="${code === 'system'}"></button>`)
    .join('');
  delete document.documentElement.dataset.theme;
}

const colours = () => [...document.querySelectorAll<HTMLMetaElement>('meta[data-theme-color]')].map((meta) => meta.content);
const pressed = () =>
  [...document.querySelectorAll('[data-theme-choice]')]
    .filter((b) => b.getAttribute('aria-pressed') === 'true')
    .map((b) => b.getAttribute('data-theme-choice'));

describe('the theme switch', () => {
  beforeEach(renderHead);

  it('writes a year-long cookie for the whole site, Secure over https', () => {
    expect(themeCookie('dark', false)).toBe('theme=dark; path=/; max-age=31536000; samesite=lax');
    expect(themeCookie('system', true)).toBe('theme=system; path=/; max-age=31536000; samesite=lax; secure');
  });

  it('pins a chosen theme on <html> and the bar colour of both schemes; system gives both back', () => {
    applyTheme(document, 'dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
    expect(colours()).toEqual([THEME_COLORS.dark, THEME_COLORS.dark]);
    expect(pressed()).toEqual(['dark']);
    applyTheme(document, 'light');
    expect(document.documentElement.dataset.theme).toBe('light');
    expect(colours()).toEqual([THEME_COLORS.light, THEME_COLORS.light]);
    applyTheme(document, 'system');
    expect(document.documentElement.hasAttribute('data-theme')).toBe(false);
    expect(colours()).toEqual([THEME_COLORS.light, THEME_COLORS.dark]);
    expect(pressed()).toEqual(['system']);
  });

  it('a click sets the cookie and the page at once; a button with an unknown value does nothing', () => {
    initThemeSwitch();
    document.querySelector<HTMLButtonElement>('[data-theme-choice="dark"]')!.click();
    expect(document.cookie).toContain('theme=dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
    const forged = document.createElement('button');
    forged.dataset.themeChoice = 'sepia';
    document.body.append(forged);
    initThemeSwitch();
    forged.click();
    expect(document.cookie).toContain('theme=dark');
    expect(document.documentElement.dataset.theme).toBe('dark');
  });
});
