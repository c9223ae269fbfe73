/**
 * Upload bench: identity-document uploads of 5 MB photos through the BFF into the
 * core (PGlite, local-disk storage), one at a time and 20 at once (20 accounts: the core checks
 * at most two uploads of one account at a time and answers a third 503). Prints MB/s and the core's
 * resident memory: idle, and its peak while the 20 run. The peak must stay within 100 MB of
 * idle (uploads stream to disk; only the re-encode, one per CPU at a time, holds a picture),
 * else the bench fails.
 * Env: BENCH_UPLOAD_MB (5), BENCH_UPLOAD_CONCURRENCY (20), SITE_DIST (site build).
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { QUIET, envNumber, root, rssBytes, startServer, stopAll, tempDir } from './bench-common.ts';

const MB = 1024 * 1024;
const SIZE_MB = envNumber('BENCH_UPLOAD_MB', 5, { min: 1 });
const CONCURRENCY = envNumber('BENCH_UPLOAD_CONCURRENCY', 20, { min: 1 });
const RSS_BUDGET = 100 * MB;
const DEMO = { email: 'demo@obmen.local', password: 'obmen-demo-2026' };

// sharp is the core's dependency: load it from there to draw the test photo.
type TSharp = (
  input: Buffer,
  options: { raw: { width: number; height: number; channels: 3 } },
) => { jpeg(options: { quality: number }): { toBuffer(): Promise<Buffer> } };
const sharp = createRequire(join(root, 'core', 'package.json'))('sharp') as TSharp;

/** A JPEG of noise (noise does not compress) of about `bytes`. */
async function noisyJpeg(bytes: number): Promise<Buffer> {
  let side = Math.round(Math.sqrt(bytes / 1.1));
  for (;;) {
    const pixels = Buffer.alloc(side * side * 3);
    for (let i = 0; i < pixels.length; i += 4) pixels.writeUInt32LE((Math.random() * 0x1_0000_0000) >>> 0, Math.min(i, pixels.length - 4));
    const jpeg = await sharp(pixels, { raw: { width: side, height: side, channels: 3 } })
      .jpeg({ quality: 92 })
      .toBuffer();
    if (jpeg.length >= bytes * 0.95 && jpeg.length <= 10 * MB) return jpeg;
    side = Math.round(side * Math.sqrt(bytes / jpeg.length));
  }
}

try {
  const data = tempDir('obmen-bench-upload-');
  const core = await startServer({
    name: 'core',
    script: 'core/src/server.ts',
    // development: the demo account signs in (no mailbox round trip); logs stay quiet.
    // MALLOC_ARENA_MAX as scripts/start.ts and the image run the core.
    env: {
      ...QUIET,
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
      NODE_ENV: 'development',
      DATA_DIR: join(data, 'pglite'),
      FILES_DIR: join(data, 'files'),
      DOCUMENT_KEY: Buffer.alloc(32, 1).toString('base64'),
      // 20 sign-ups from one address (10 an hour per address otherwise).
      RATE_LIMIT_FACTOR: '100',
    },
    health: '/api/health',
    pin: false,
  });
  const bff = await startServer({
    name: 'bff',
    script: 'bff/src/server.ts',
    env: { ...QUIET, UPSTREAM_URL: core.url, UPSTREAM_TIMEOUT_MS: '120000', ...(process.env.SITE_DIST ? { SITE_DIST: process.env.SITE_DIST } : {}) },
    health: '/local/healthcheck',
    pin: false,
  });
  const origin = bff.url;
  const login = await fetch(`${bff.url}/api/auth/login_by_password`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify(DEMO),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  if (!login.ok || !cookie) throw new Error(`demo sign-in failed: ${login.status}`);
  const openDraft = async (account: { cookie: string; origin: string }) =>
    ((await (await fetch(`${bff.url}/api/verification/passport/new`, { headers: account })).json()) as { verification: { current: { id: string } } })
      .verification.current.id;
  /** A new account through the mailed confirmation link (the core's development mailbox), with its draft. */
  const newAccount = async (n: number) => {
    const email = `bench-upload-${n}-${Date.now()}@obmen.local`;
    const register = await fetch(`${bff.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin },
      body: JSON.stringify({ email, password: DEMO.password }),
    });
    if (!register.ok) throw new Error(`sign-up answered ${register.status}`);
    const box = (await (await fetch(`${core.url}/api/dev/mailbox?to=${encodeURIComponent(email)}`)).json()) as { mails: Array<{ text: string }> };
    const token = /(?:token|confirm)=([A-Za-z0-9_-]{43})/.exec(box.mails.at(-1)?.text ?? '')?.[1];
    const confirmed = await fetch(`${bff.url}/api/auth/confirm/${token}`, { method: 'POST', headers: { origin } });
    const session = (confirmed.headers.get('set-cookie') ?? '').split(';')[0]!;
    if (!confirmed.ok || !session) throw new Error(`confirmation answered ${confirmed.status}`);
    const account = { cookie: session, origin };
    return { headers: account, id: await openDraft(account) };
  };
  const demo = { headers: { cookie, origin }, id: await openDraft({ cookie, origin }) };
  const accounts = await Promise.all(Array.from({ length: CONCURRENCY }, (_, n) => newAccount(n)));
  const photo = await noisyJpeg(SIZE_MB * MB);

  const uploadOnce = async ({ headers, id }: { headers: Record<string, string>; id: string } = demo) => {
    const form = new FormData();
    form.append('id', id);
    form.append('side0', 'front');
    form.append('file0', new Blob([new Uint8Array(photo)], { type: 'image/jpeg' }), 'photo.jpg');
    const res = await fetch(`${bff.url}/api/verification/passport/upload`, { method: 'POST', headers, body: form });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`upload answered ${res.status}`);
  };

  await uploadOnce(); // warm-up: modules, sharp's thread pool, the PGlite plan cache
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = rssBytes(core.pid);

  let started = performance.now();
  for (let i = 0; i < 5; i++) await uploadOnce();
  const sequentialS = (performance.now() - started) / 1000;

  let peak = idle ?? 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(core.pid) ?? 0)), 20);
  started = performance.now();
  await Promise.all(accounts.map((account) => uploadOnce(account)));
  const concurrentS = (performance.now() - started) / 1000;
  clearInterval(sampler);

  const photoMb = photo.length / MB;
  const rows = [
    ['photo', `${photoMb.toFixed(2)} MB JPEG`],
    ['one at a time (5)', `${((5 * photoMb) / sequentialS).toFixed(1)} MB/s, ${((sequentialS / 5) * 1000).toFixed(0)} ms per upload`],
    [`${CONCURRENCY} at once`, `${((CONCURRENCY * photoMb) / concurrentS).toFixed(1)} MB/s, ${concurrentS.toFixed(1)} s in all`],
    ['core RSS idle', idle === null ? 'unknown' : `${(idle / MB).toFixed(0)} MB`],
    [
      `core RSS peak (${CONCURRENCY} at once)`,
      idle === null ? 'unknown' : `${(peak / MB).toFixed(0)} MB (+${((peak - idle) / MB).toFixed(0)} MB, budget +${RSS_BUDGET / MB})`,
    ],
  ];
  console.log('| upload bench | |\n|---|---|');
  for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
  await stopAll();
  if (idle !== null && peak - idle > RSS_BUDGET) {
    console.error(`[bench-upload] the core grew by ${((peak - idle) / MB).toFixed(0)} MB during ${CONCURRENCY} uploads: over the ${RSS_BUDGET / MB} MB budget`);
    process.exit(1);
  }
} catch (err) {
  console.error(err);
  await stopAll();
  process.exit(1);
}
