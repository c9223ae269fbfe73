import { describe, expect, it } from 'vitest';
import { THEMES, isTheme, themeAttribute, themeOf } from '../src/theme.ts';

describe('the theme cookie', () => {
  it('turns light and dark into the <html> attribute, and system into none', () => {
    expect(themeAttribute('light')).toBe('light');
    expect(themeAttribute('dark')).toBe('dark');
    expect(themeAttribute('system')).toBeUndefined();
    expect(THEMES.map(themeOf)).toEqual(['light', 'dark', 'system']);
  });

  it('takes a missing or bad value as no choice (the system decides)', () => {
    for (const value of [undefined, null, '', 'Dark', 'dark ', 'nord_frost', '"dark"', 'dark;light', 1, {}]) {
      expect(isTheme(value), String(value)).toBe(false);
      expect(themeOf(value)).toBe('system');
      expect(themeAttribute(value)).toBeUndefined();
    }
  });
});
