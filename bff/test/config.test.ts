import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES } from '../src/config.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe("the BFF's configuration is documented", () => {
  it.each(CONFIG_VARIABLES)('%s is in .env.example and docs/ops.md', (name) => {
    expect(read('.env.example')).toMatch(new RegExp(`^# ${name}=`, 'm'));
    expect(read('docs/ops.md')).toContain(`\`${name}\``);
  });
});
