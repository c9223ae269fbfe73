import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES, openTestDb } from '../helpers.ts';
import type { Db } from '../../src/db/index.ts';
import { FUNCTIONS_DIR, applyFunctions, migrate } from '../../src/db/migrate.ts';

/*
 * Every SQL function and trigger lives in one current file of core/sql/functions,
 * applied after the migrations on every start. The live database must equal the files.
 */

type TFileFunction = { name: string; body: string; generic: boolean };

const FILES = readdirSync(FUNCTIONS_DIR).filter((name) => name.endsWith('.sql'));
const TEXT = FILES.map((file) => readFileSync(join(FUNCTIONS_DIR, file), 'utf8')).join('\n');
const FUNCTION = /CREATE OR REPLACE FUNCTION (\w+)\(([\s\S]*?)\bAS \$\$([\s\S]*?)\$\$/g;
const fileFunctions: TFileFunction[] = [...TEXT.matchAll(FUNCTION)].map((match) => ({
  name: match[1]!,
  body: match[3]!,
  generic: /SET plan_cache_mode = force_generic_plan\s*$/.test(match[2]!),
}));
const fileTriggers = new Set([...TEXT.matchAll(/TRIGGER (\w+) (?:AFTER|BEFORE)/g)].map((match) => match[1]!));

async function liveFunctions(db: Db) {
  return db.query<{ name: string; body: string; config: string[] | null; def: string }>(
    `SELECT p.proname AS name, p.prosrc AS body, p.proconfig AS config, pg_get_functiondef(p.oid) AS def
     FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY p.proname`,
  );
}

async function liveTriggers(db: Db) {
  return db.query<{ name: string; def: string }>(
    `SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND NOT t.tgisinternal ORDER BY t.tgname`,
  );
}

describe('the SQL functions files', () => {
  it('each define one function, once, in a file of its name', () => {
    const names = fileFunctions.map((fn) => fn.name);
    expect(new Set(names).size).toBe(names.length);
    for (const file of FILES) expect(names).toContain(file.replace(/\.sql$/, ''));
  });
});

describe.each(ENGINES)('SQL functions on %s', (engine) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await openTestDb(engine));
    await migrate(db);
  });
  afterAll(() => drop());

  it('after the migrations, every live function is the one of its file, with its generic-plan setting', async () => {
    const live = await liveFunctions(db);
    expect(live.map((fn) => fn.name).sort()).toEqual(fileFunctions.map((fn) => fn.name).sort());
    for (const fn of fileFunctions) {
      const found = live.find((row) => row.name === fn.name)!;
      expect(found.body, fn.name).toBe(fn.body);
      expect(found.config ?? [], fn.name).toEqual(fn.generic ? ['plan_cache_mode=force_generic_plan'] : []);
    }
  });

  it('every trigger of the database has its file', async () => {
    const live = await liveTriggers(db);
    expect(live.map((trigger) => trigger.name).sort()).toEqual([...fileTriggers].sort());
  });

  it('applying the files again changes nothing; a start puts back a function changed behind its back', async () => {
    const functions = await liveFunctions(db);
    const triggers = await liveTriggers(db);
    await db.transaction((tx) => applyFunctions(tx));
    expect(await migrate(db)).toEqual([]);
    expect(await liveFunctions(db)).toEqual(functions);
    expect(await liveTriggers(db)).toEqual(triggers);

    await db.exec(`CREATE OR REPLACE FUNCTION iso_time(p_at timestamptz) RETURNS text LANGUAGE sql STABLE AS $$ SELECT 'stale' $$`);
    const [stale] = await db.query<{ at: string }>(`SELECT iso_time('2026-01-02T03:04:05.678Z') AS at`);
    expect(stale!.at).toBe('stale');
    await migrate(db);
    const [current] = await db.query<{ at: string }>(`SELECT iso_time('2026-01-02T03:04:05.678Z') AS at`);
    expect(current!.at).toBe('2026-01-02T03:04:05.678Z');
    expect(await liveFunctions(db)).toEqual(functions);
  });
});
