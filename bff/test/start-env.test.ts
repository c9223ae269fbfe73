import { describe, expect, it } from 'vitest';
import { sitePublicUrl } from '../../scripts/supervise.ts';

describe('the start scripts tell the core where the site is', () => {
  it('links point at the PORT the site was started on, unless PUBLIC_URL names the public address', () => {
    expect(sitePublicUrl({ PORT: '3300' })).toBe('http://localhost:3300');
    expect(sitePublicUrl({})).toBe('http://localhost:3000');
    expect(sitePublicUrl({ PORT: '3300', PUBLIC_URL: 'https://obmen.example' })).toBe('https://obmen.example');
  });
});
