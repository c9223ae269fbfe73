import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_VARIABLES, loadConfig } from '../src/config.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe("the core's configuration is documented", () => {
  it.each(CONFIG_VARIABLES)('%s is in .env.example and docs/ops.md', (name) => {
    expect(read('.env.example')).toMatch(new RegExp(`^# ${name}=`, 'm'));
    expect(read('docs/ops.md')).toContain(`\`${name}\``);
  });
});

describe('core configuration', () => {
  it('bounds the PostgreSQL waits by default and refuses bad values by name', () => {
    expect(loadConfig({})).toMatchObject({ DB_CONNECT_TIMEOUT_MS: 5_000, DB_STATEMENT_TIMEOUT_MS: 8_000 });
    expect(loadConfig({ DB_STATEMENT_TIMEOUT_MS: '0', DB_CONNECT_TIMEOUT_MS: '250' })).toMatchObject({
      DB_CONNECT_TIMEOUT_MS: 250,
      DB_STATEMENT_TIMEOUT_MS: 0,
    });
    for (const [name, value] of [
      ['DB_CONNECT_TIMEOUT_MS', '0'],
      ['DB_CONNECT_TIMEOUT_MS', 'soon'],
      ['DB_STATEMENT_TIMEOUT_MS', '-1'],
      ['DB_STATEMENT_TIMEOUT_MS', '1.5'],
    ]) {
      expect(() => loadConfig({ [name!]: value })).toThrow(new RegExp(`Invalid core configuration: ${name}`));
    }
  });
});

describe('password hashing cost', () => {
  it('is the OWASP 17 by default and cannot be lowered outside a test run', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).PASSWORD_SCRYPT_LN).toBe(17);
    expect(loadConfig({ NODE_ENV: 'development' }).PASSWORD_SCRYPT_LN).toBe(17);
    expect(loadConfig({ NODE_ENV: 'test', PASSWORD_SCRYPT_LN: '12' }).PASSWORD_SCRYPT_LN).toBe(12);
    expect(() => loadConfig({ NODE_ENV: 'production', PASSWORD_SCRYPT_LN: '12' })).toThrow(/PASSWORD_SCRYPT_LN: below 17 only with NODE_ENV=test/);
    expect(() => loadConfig({ NODE_ENV: 'development', PASSWORD_SCRYPT_LN: '16' })).toThrow(/PASSWORD_SCRYPT_LN/);
    expect(() => loadConfig({ NODE_ENV: 'production', PASSWORD_SCRYPT_LN: '18' })).not.toThrow();
  });
});
