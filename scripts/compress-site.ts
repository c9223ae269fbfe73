/**
 * The site build's static files, compressed once as hard as they go: a .br and a .gz copy beside
 * every text asset of at least 1 KiB where the copy is smaller. The BFF sends the copy the
 * client takes (@fastify/static preCompressed, bff/src/plugins/site.ts). Part of `pnpm build`.
 *   node scripts/compress-site.ts [CLIENT_DIR]   (default site/dist/client)
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { precompress } from '../bff/src/compression.ts';

const TEXT_EXTENSIONS = new Set(['.js', '.mjs', '.css', '.html', '.svg', '.json', '.txt', '.xml', '.webmanifest', '.map']);

const root = join(import.meta.dirname, '..');
const dir = process.argv[2] ?? join(root, 'site/dist/client');

const files = readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && TEXT_EXTENSIONS.has(extname(entry.name)))
  .map((entry) => join(entry.parentPath, entry.name));

let before = 0;
let after = 0;
let copies = 0;
for (const file of files) {
  const body = readFileSync(file);
  const compressed = await precompress(body);
  before += body.length;
  after += compressed.br?.length ?? body.length;
  for (const [encoding, copy] of Object.entries(compressed)) {
    writeFileSync(`${file}.${encoding === 'br' ? 'br' : 'gz'}`, copy);
    copies++;
  }
}
console.log(
  `[compress-site] ${files.length} text files, ${copies} compressed copies: ${Math.round(before / 1024)} kB → ${Math.round(after / 1024)} kB as brotli`,
);
