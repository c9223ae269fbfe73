/**
 * Lints the API document as the BFF serves it (/api/openapi.json) with Redocly's recommended
 * rules (redocly.yaml); part of `pnpm lint`. No network: the core is built in this process on an
 * in-memory PGlite (as the tests build it), and its document is finished as the BFF finishes it.
 *   node scripts/openapi-lint.ts [FILE]   also keeps the document in FILE
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../core/test/helpers.ts';
import { finishDocument } from '../bff/src/openapi.ts';
import { OPENAPI_PATH } from '../bff/src/plugins/api-docs.ts';

const root = join(import.meta.dirname, '..');
const kept = process.argv[2];

const core = await build('pglite');
let text: string;
try {
  const answer = await core.app.inject({ url: OPENAPI_PATH });
  if (answer.statusCode !== 200) throw new Error(`the core answered ${answer.statusCode} for its document`);
  text = finishDocument(answer.body);
} finally {
  await core.close();
}

const dir = mkdtempSync(join(tmpdir(), 'obmen-openapi-'));
const file = kept ?? join(dir, 'openapi.json');
writeFileSync(file, text);
// Redocly asks the registry for a newer version and sends telemetry unless told not to.
const lint = spawnSync(join(root, 'node_modules/.bin/redocly'), ['lint', '--format', 'stylish', '--config', join(root, 'redocly.yaml'), file], {
  stdio: 'inherit',
  env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
});
rmSync(dir, { recursive: true, force: true });
process.exit(lint.status ?? 1);
