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
