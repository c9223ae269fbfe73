import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * The ledger is the only door to the ledger's SQL: no TypeScript of core/src outside
 * domains/ledger calls a `ledger_*` function of core/sql/functions (or names one in its SQL).
 * Domains post, lock, hold, capture and release through domains/ledger/posting.ts and
 * holds.ts. Tests and benches may call the functions directly.
 */

const SRC = resolve(import.meta.dirname, '../../../src');
const LEDGER = join(SRC, 'domains', 'ledger');
const FUNCTIONS = resolve(import.meta.dirname, '../../../sql/functions');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the ledger is the only door to its SQL', () => {
  it('knows the ledger functions', () => {
    const names = readdirSync(FUNCTIONS).filter((name) => name.startsWith('ledger_'));
    expect(names).toContain('ledger_post.sql');
    expect(names).toContain('ledger_hold_place.sql');
  });

  it('no TypeScript outside domains/ledger calls a ledger_ function', () => {
    const names = readdirSync(FUNCTIONS)
      .filter((name) => name.startsWith('ledger_') && name.endsWith('.sql'))
      .map((name) => name.slice(0, -'.sql'.length));
    const call = new RegExp(`\\b(${names.join('|')})\\s*\\(`, 'g');
    const offenders = sourceFiles(SRC)
      .filter((file) => !file.startsWith(`${LEDGER}/`))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, index) => [...line.matchAll(call)].map((match) => `${relative(SRC, file)}:${index + 1} ${match[1]}`)),
      );
    expect(offenders).toEqual([]);
  });
});
