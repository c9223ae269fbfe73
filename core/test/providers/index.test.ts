import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PAYMENT_PROVIDERS } from '@obmen/shared';
import { describe, expect, it } from 'vitest';
import { loadCardIssuers, loadPaymentProviders } from '../../src/providers/index.ts';
import { DEV_WEBHOOK_SECRETS } from '../../src/providers/sandbox/index.ts';
import { testCipher } from '../helpers.ts';

const DOMAINS = resolve(import.meta.dirname, '../../src/domains');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the providers registry', () => {
  it('registers the sandboxes where they may run: outside production, or by the staging switch', () => {
    expect([...loadPaymentProviders({ NODE_ENV: 'test' }).keys()]).toEqual(['sandbox-card', 'sandbox-bank', 'sandbox-chain']);
    expect([...loadPaymentProviders({ NODE_ENV: 'production' }).keys()]).toEqual([]);
    expect([...loadPaymentProviders({ NODE_ENV: 'production', SANDBOX_PROVIDERS_IN_PRODUCTION: true }).keys()]).toHaveLength(3);
    expect([...loadCardIssuers({ NODE_ENV: 'development' }, testCipher()).keys()]).toEqual(['sandbox']);
    expect([...loadCardIssuers({ NODE_ENV: 'production' }, testCipher()).keys()]).toEqual([]);
  });

  it('gives each provider its configured secret, the development one outside production, none in production', () => {
    const secret = 'a-configured-sandbox-card-secret-0123456789';
    const test = loadPaymentProviders({ NODE_ENV: 'test', WEBHOOK_SECRET_SANDBOX_CARD: secret });
    expect(test.get('sandbox-card')?.webhookSecret).toBe(secret);
    expect(test.get('sandbox-bank')?.webhookSecret).toBe(DEV_WEBHOOK_SECRETS['sandbox-bank']);
    const staging = loadPaymentProviders({ NODE_ENV: 'production', SANDBOX_PROVIDERS_IN_PRODUCTION: true, WEBHOOK_SECRET_SANDBOX_CARD: secret });
    expect(staging.get('sandbox-card')?.webhookSecret).toBe(secret);
    expect(staging.get('sandbox-chain')?.webhookSecret).toBeUndefined();
  });

  it('leaves the domains without a provider id: they reach providers through their adapters', () => {
    const named = sourceFiles(DOMAINS).flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      return PAYMENT_PROVIDERS.filter((id) => text.includes(`'${id}'`) || text.includes(`"${id}"`)).map((id) => `${file}: ${id}`);
    });
    expect(named).toEqual([]);
  });
});
