// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { serviceWorkerUrl, wantsServiceWorker } from '../src/scripts/installable.ts';

describe('the service worker registration', () => {
  it('names the build and the language in the script URL (either changing installs a new worker)', () => {
    expect(serviceWorkerUrl('Ab12_cd-34Ef', 'en')).toBe('/sw.js?v=Ab12_cd-34Ef&lang=en');
    expect(serviceWorkerUrl('Ab12_cd-34Ef', 'ru')).not.toBe(serviceWorkerUrl('Ab12_cd-34Ef', 'en'));
  });

  it('is left out on the development server, without a build version, or without support', () => {
    expect(wantsServiceWorker('Ab12_cd-34Ef', true)).toBe(true);
    expect(wantsServiceWorker('dev', true)).toBe(false);
    expect(wantsServiceWorker('', true)).toBe(false);
    expect(wantsServiceWorker('Ab12_cd-34Ef', false)).toBe(false);
  });
});
