/**
 * The article-page figures, side by side in one run, on loopback only:
 *
 *   1. requests/s of the BFF serving a signed-out article page from its page cache, against
 *      nginx (Debian's package, installed here when missing) serving the very same bytes as a
 *      static file; same connection count, same pinning, once with gzip on both (the client
 *      asks for gzip; nginx gzip_static, the BFF its precompressed variant) and once with no
 *      compression on either. Target: BFF >= 0.5x nginx.
 *   2. the gzipped JavaScript a signed-out visitor downloads on the page: every <script src>
 *      and <link rel="modulepreload">, and what those modules import statically, recursively.
 *      Target: <= 10 KB.
 *   3. Lighthouse (npm package `lighthouse`, installed into node_modules/.cache on first use)
 *      on Debian's Chromium, mobile preset, performance category. Target: 100.
 *
 * Shape: like scripts/bench.ts. Servers (core on PGlite, BFF, nginx) on CPU 0, the load
 * generator (scripts/bench-load.ts, autocannon) alone on CPU 1 (taskset), rounds of every
 * scenario in turn, medians. `runArticleBench()` is exported for bench.ts; run directly it
 * prints a Markdown table and writes the figures as JSON.
 *
 *   node scripts/bench-article.ts
 * Knobs (environment): BENCH_ROUNDS (3), BENCH_DURATION (8 s), BENCH_WARMUP (2 s),
 * BENCH_CONNECTIONS (50), BENCH_ARTICLE (/article/fees), BENCH_LIGHTHOUSE (1; 0 skips),
 * BENCH_OUT (bench-article-results.json), SITE_DIST (site build; copied first, so a rebuild
 * during the bench does no harm), BENCH_BFF_URL (measure an already running BFF instead of
 * starting core + BFF here).
 * Exit status 1 when a server failed, a scenario saw errors, or a target was missed.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { TLoadResult } from './bench-load.ts';
import {
  QUIET,
  SERVER_CPU,
  canPin,
  cpuMeter,
  envNumber,
  median,
  pinned,
  root,
  runLoad,
  startProcess,
  startServer,
  stopAll,
  tempDir,
  usPer,
  waitForHealth,
} from './bench-common.ts';
import { freePort } from './supervise.ts';

export type TArticleBenchOptions = {
  rounds?: number;
  duration?: number;
  warmup?: number;
  connections?: number;
  article?: string;
  lighthouse?: boolean;
  /** A BFF already running in front of a core (e.g. bench.ts's); otherwise core and BFF are started here. */
  bffUrl?: string;
  /** Its process id, for the CPU time per request (Linux /proc). */
  bffPid?: number;
  log?: (line: string) => void;
};

export type TArticleScenario = {
  id: string;
  title: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  bytesPerResponse: number;
  /** CPU time of the serving process(es) per request: the BFF; nginx master + worker. */
  cpuUsPerRequest: number | null;
  runs: Array<TLoadResult & { cpuUsPerRequest: number | null }>;
};

export type TArticleComparison = {
  id: string;
  title: string;
  subject: string;
  baseline: string;
  minRpsRatio: number;
  rpsRatio: number;
  cpuRatio: number | null;
  ok: boolean;
};

export type TArticleBenchResult = {
  date: string;
  article: string;
  pinned: boolean;
  settings: { rounds: number; duration: number; warmup: number; connections: number };
  nginx: string;
  page: { htmlBytes: number; gzipBytes: number; brotliBytes: number | null };
  scenarios: TArticleScenario[];
  comparisons: TArticleComparison[];
  javascript: {
    files: Array<{ url: string; bytes: number; gzipBytes: number; how: string }>;
    inlineBytes: number;
    inlineGzipBytes: number;
    gzipBytes: number;
    limitBytes: number;
    ok: boolean;
    lazy: string[];
  };
  lighthouse: { score: number | null; ok: boolean; metrics?: Record<string, number | null>; error?: string };
  ok: boolean;
};

const JS_LIMIT_BYTES = 10 * 1024;
const MIN_RPS_RATIO = 0.5;
const LIGHTHOUSE_VERSION = '13.5.0';
const CHROMIUM = '/usr/bin/chromium';

// ---------------------------------------------------------------------------------------------
// nginx: Debian's package, a throw-away instance on a loopback port with its own config

function findNginx(): string | null {
  for (const path of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(path)) return path;
  const which = spawnSync('sh', ['-c', 'command -v nginx']);
  return which.status === 0 ? which.stdout.toString().trim() : null;
}

function ensureNginx(log: (line: string) => void): string {
  const found = findNginx();
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error('nginx is missing and only root can install it: apt-get install nginx');
  log("[bench-article] installing Debian's nginx (apt-get)");
  // No service start from the package: an init script would take port 80 for good.
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = !existsSync(policy);
  if (ownPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    for (const args of [
      ['update', '-qq'],
      ['install', '-y', '-qq', '--no-install-recommends', 'nginx'],
    ]) {
      const run = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
      if (run.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (${run.status})`);
    }
  } finally {
    if (ownPolicy) unlinkSync(policy);
  }
  const installed = findNginx();
  if (!installed) throw new Error('nginx still missing after apt-get install nginx');
  return installed;
}

async function startNginx(binary: string, dir: string, files: Record<string, Buffer>): Promise<{ url: string; pid: number | null }> {
  const www = join(dir, 'www');
  mkdirSync(www, { recursive: true });
  // Run as root, nginx's workers drop to nobody: they must be able to reach and read the files.
  chmodSync(dirname(dir), 0o755);
  chmodSync(dir, 0o755);
  chmodSync(www, 0o755);
  for (const [path, bytes] of Object.entries(files)) {
    const file = join(www, path);
    mkdirSync(dirname(file), { recursive: true, mode: 0o755 });
    for (let d = dirname(file); d.startsWith(www) && d !== www; d = dirname(d)) chmodSync(d, 0o755);
    writeFileSync(file, bytes, { mode: 0o644 });
  }
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  default_type text/html;
  charset utf-8;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 65;
  keepalive_requests 1000000;
  open_file_cache max=100 inactive=60s;
  open_file_cache_valid 60s;
  server {
    listen 127.0.0.1:${port};
    root ${www};
    location / {
      gzip_static on;
      gzip_vary on;
      etag on;
    }
  }
}
`,
  );
  const [command, args] = pinned(SERVER_CPU, binary, ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf]);
  const nginx = startProcess('nginx', command, args, process.env);
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(`${url}/${Object.keys(files)[0]}`, nginx, 15_000);
  return { url, pid: nginx.pid ?? null };
}

type TRun = TLoadResult & { cpuUsPerRequest: number | null };

// ---------------------------------------------------------------------------------------------
// JavaScript a signed-out visitor downloads

async function measureJavaScript(pageUrl: string): Promise<TArticleBenchResult['javascript']> {
  const html = await (await fetch(pageUrl)).text();
  const queue: Array<{ url: string; how: string }> = [];
  const seen = new Set<string>();
  const lazy = new Set<string>();
  const add = (href: string, base: string, how: string) => {
    const url = new URL(href, base).href;
    if (!seen.has(url)) {
      seen.add(url);
      queue.push({ url, how });
    }
  };
  for (const [, attrs] of html.matchAll(/<script\b([^>]*)>/gi)) {
    const src = /\ssrc=["']?([^"'\s>]+)/i.exec(attrs!)?.[1];
    if (src) add(src, pageUrl, 'script src');
  }
  for (const [tag] of html.matchAll(/<link\b[^>]*>/gi)) {
    if (!/rel=["']?modulepreload/i.test(tag)) continue;
    const href = /\shref=["']?([^"'\s>]+)/i.exec(tag)?.[1];
    if (href) add(href, pageUrl, 'modulepreload');
  }
  const inline = [...html.matchAll(/<script\b(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/gi)]
    .filter(([tag]) => !/type=["']?application\/(ld\+)?json/i.test(tag))
    .map(([, body]) => body ?? '')
    .join('\n');
  const files: TArticleBenchResult['javascript']['files'] = [];
  while (queue.length) {
    const { url, how } = queue.shift()!;
    const res = await fetch(url);
    const text = await res.text();
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    files.push({ url: new URL(url).pathname, bytes: Buffer.byteLength(text), gzipBytes: gzipSync(text, { level: 9 }).length, how });
    // Static imports are fetched before the module runs; dynamic import() only when called.
    for (const [, spec] of text.matchAll(/(?:^|[;\s}])(?:import|export)\s*(?:[\w*${}\s,]+from\s*)?["']([^"']+\.m?js)["']/g)) add(spec!, url, 'static import');
    for (const [, spec] of text.matchAll(/import\(\s*["']([^"']+)["']\s*\)/g)) lazy.add(new URL(spec!, url).pathname);
  }
  const inlineGzipBytes = inline.trim() ? gzipSync(inline, { level: 9 }).length : 0;
  const gzipBytes = files.reduce((sum, f) => sum + f.gzipBytes, 0) + inlineGzipBytes;
  return {
    files,
    inlineBytes: Buffer.byteLength(inline),
    inlineGzipBytes,
    gzipBytes,
    limitBytes: JS_LIMIT_BYTES,
    ok: gzipBytes <= JS_LIMIT_BYTES,
    lazy: [...lazy],
  };
}

// ---------------------------------------------------------------------------------------------
// Lighthouse on Debian's Chromium

async function loadLighthouse(log: (line: string) => void): Promise<{
  lighthouse: (url: string, flags: object) => Promise<{ lhr: Record<string, any> }>;
  launch: (opts: object) => Promise<{ port: number; kill: () => Promise<void> | void }>;
}> {
  const dir = join(root, 'node_modules', '.cache', 'obmen-bench', `lighthouse-${LIGHTHOUSE_VERSION}`);
  const entry = join(dir, 'node_modules', 'lighthouse', 'core', 'index.js');
  if (!existsSync(entry)) {
    log(`[bench-article] installing lighthouse@${LIGHTHOUSE_VERSION} into ${dir} (npm, once)`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{"private":true}\n');
    const run = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', `lighthouse@${LIGHTHOUSE_VERSION}`], {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
      env: { ...process.env, PUPPETEER_SKIP_DOWNLOAD: '1' },
    });
    if (run.status !== 0) throw new Error(`npm install lighthouse@${LIGHTHOUSE_VERSION} failed (${run.status})`);
  }
  const lighthouse = (await import(pathToFileURL(entry).href)).default;
  const launcher = await import(pathToFileURL(join(dir, 'node_modules', 'chrome-launcher', 'dist', 'index.js')).href);
  return { lighthouse, launch: launcher.launch };
}

async function runLighthouse(url: string, log: (line: string) => void): Promise<TArticleBenchResult['lighthouse']> {
  if (!existsSync(CHROMIUM)) return { score: null, ok: false, error: `${CHROMIUM} is missing (apt-get install chromium)` };
  let chrome: { port: number; kill: () => Promise<void> | void } | null = null;
  try {
    const { lighthouse, launch } = await loadLighthouse(log);
    chrome = await launch({
      chromePath: CHROMIUM,
      chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'],
    });
    // Default config: the mobile preset (Moto G Power, simulated slow 4G, 4x CPU slowdown).
    const { lhr } = await lighthouse(url, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['performance'] });
    const score = lhr.categories?.performance?.score;
    const metric = (id: string) => (lhr.audits?.[id]?.numericValue as number | undefined) ?? null;
    return {
      score: typeof score === 'number' ? Math.round(score * 100) : null,
      ok: score === 1,
      metrics: {
        'first-contentful-paint ms': metric('first-contentful-paint'),
        'largest-contentful-paint ms': metric('largest-contentful-paint'),
        'total-blocking-time ms': metric('total-blocking-time'),
        'cumulative-layout-shift': metric('cumulative-layout-shift'),
        'speed-index ms': metric('speed-index'),
      },
      ...(lhr.runtimeError ? { error: `${lhr.runtimeError.code}: ${lhr.runtimeError.message}` } : {}),
    };
  } catch (err) {
    return { score: null, ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    await chrome?.kill();
  }
}

// ---------------------------------------------------------------------------------------------

export async function runArticleBench(options: TArticleBenchOptions = {}): Promise<TArticleBenchResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const settings = {
    rounds: options.rounds ?? 3,
    duration: options.duration ?? 8,
    warmup: options.warmup ?? 2,
    connections: options.connections ?? 50,
  };
  const article = options.article ?? '/article/fees';
  const dir = tempDir('obmen-bench-article-');
  let siteDist: { dir: string; remove: () => void } | null = null;
  try {
    const nginxBinary = ensureNginx(log);
    const nginxVersion = spawnSync(nginxBinary, ['-v']).stderr.toString().trim();

    // Core and BFF, unless given one.
    let bffUrl = options.bffUrl;
    if (!options.bffUrl) siteDist = await snapshotSiteBuild(log);
    let bffPid: number | null = options.bffPid ?? null;
    if (!bffUrl) {
      const core = await startServer({ name: 'core', script: 'core/src/server.ts', env: { ...QUIET, DATA_DIR: join(dir, 'pglite') }, health: '/api/health' });
      const bff = await startServer({
        name: 'bff',
        script: 'bff/src/server.ts',
        env: { ...QUIET, UPSTREAM_URL: core.url, SITE_DIST: siteDist!.dir },
        health: '/local/healthcheck',
      });
      bffPid = bff.pid ?? null;
      bffUrl = bff.url;
      log(`[bench-article] core and BFF up (${bffUrl})`);
    }
    const pageUrl = bffUrl + article;

    // Warm the cache (the first visit starts the version polling, the next ones fill it).
    let cached = false;
    for (let i = 0; i < 50 && !cached; i++) {
      const res = await fetch(pageUrl);
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${pageUrl} answered ${res.status}`);
      cached = res.headers.get('x-page-cache') === 'hit';
      if (!cached) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!cached) throw new Error(`${pageUrl} is not served from the page cache (is PAGE_CACHE_TTL_MS 0?)`);

    // The same bytes for nginx: the page as the BFF sends it, plain and gzip.
    const plain = Buffer.from(await (await fetch(pageUrl, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer());
    // fetch() decodes: the compressed variants are read as sent through node:http.
    const gz = await rawBody(pageUrl, { 'accept-encoding': 'gzip' });
    const br = await rawBody(pageUrl, { 'accept-encoding': 'br' });
    const file = article.replace(/^\//, '');
    const { url: nginxUrl, pid: nginxPid } = await startNginx(nginxBinary, join(dir, 'nginx'), { [file]: plain, [`${file}.gz`]: gz.body });
    log(`[bench-article] ${nginxVersion} up at ${nginxUrl}; page ${plain.length} B, gzip ${gz.body.length} B`);

    const scenarios: Array<{ id: string; title: string; url: string; headers: Record<string, string>; pids: number[] }> = [
      {
        id: 'nginx-gzip',
        title: `nginx, ${article} as a static file, gzip`,
        url: nginxUrl + article,
        headers: { 'accept-encoding': 'gzip' },
        pids: nginxPid ? [nginxPid] : [],
      },
      { id: 'bff-gzip', title: `BFF page cache, ${article}, gzip`, url: pageUrl, headers: { 'accept-encoding': 'gzip' }, pids: bffPid ? [bffPid] : [] },
      {
        id: 'nginx-plain',
        title: `nginx, ${article} as a static file, no compression`,
        url: nginxUrl + article,
        headers: {},
        pids: nginxPid ? [nginxPid] : [],
      },
      { id: 'bff-plain', title: `BFF page cache, ${article}, no compression`, url: pageUrl, headers: {}, pids: bffPid ? [bffPid] : [] },
    ];
    // Both sides must answer with the same bytes before anything is measured.
    for (const s of scenarios) {
      const got = await rawBody(s.url, s.headers);
      const want = s.headers['accept-encoding'] === 'gzip' ? gz.body : plain;
      if (got.status !== 200 || !got.body.equals(want))
        throw new Error(`${s.id}: ${s.url} does not answer the same bytes (status ${got.status}, ${got.body.length} B vs ${want.length} B)`);
      if (s.id.startsWith('bff') && got.headers['x-page-cache'] !== 'hit') throw new Error(`${s.id}: not a page-cache hit`);
    }

    const runs = new Map<string, TRun[]>(scenarios.map((s) => [s.id, []]));
    for (let round = 1; round <= settings.rounds; round++) {
      for (const s of scenarios) {
        // The serving processes with their children (nginx: master + worker).
        const measured = await runLoad(
          { url: s.url, headers: s.headers, connections: settings.connections, duration: settings.duration, warmup: settings.warmup },
          s.pids.length ? [cpuMeter(s.pids, true)] : [],
        );
        const run: TRun = { ...measured, cpuUsPerRequest: usPer(measured.cpuSeconds[0] ?? null, measured.requests) };
        runs.get(s.id)!.push(run);
        log(
          `[bench-article] round ${round}/${settings.rounds} ${s.id}: ${run.rps.toFixed(0)} req/s, p99 ${run.latencyMs.p99} ms, ${run.cpuUsPerRequest?.toFixed(0) ?? 'n/a'} CPU µs/req${run.errors + run.non2xx + run.timeouts ? `, ${run.errors} errors, ${run.non2xx} non-2xx` : ''}`,
        );
      }
    }
    const summaries: TArticleScenario[] = scenarios.map((s) => {
      const r = runs.get(s.id)!;
      return {
        id: s.id,
        title: s.title,
        rps: median(r.map((x) => x.rps)),
        p50Ms: median(r.map((x) => x.latencyMs.p50)),
        p99Ms: median(r.map((x) => x.latencyMs.p99)),
        errors: r.reduce((sum, x) => sum + x.errors + x.timeouts, 0),
        non2xx: r.reduce((sum, x) => sum + x.non2xx, 0),
        bytesPerResponse: s.headers['accept-encoding'] === 'gzip' ? gz.body.length : plain.length,
        cpuUsPerRequest: r.every((x) => x.cpuUsPerRequest !== null) ? median(r.map((x) => x.cpuUsPerRequest!)) : null,
        runs: r,
      };
    });
    const find = (id: string) => summaries.find((s) => s.id === id)!;
    const comparisons: TArticleComparison[] = [
      ['gzip', 'bff-gzip', 'nginx-gzip', 'Article page: BFF page cache vs nginx static file, gzip on both'],
      ['plain', 'bff-plain', 'nginx-plain', 'Article page: BFF page cache vs nginx static file, no compression'],
    ].map(([id, subject, baseline, title]) => {
      const rpsRatio = find(subject!).rps / find(baseline!).rps;
      const subjectCpu = find(subject!).cpuUsPerRequest;
      const baselineCpu = find(baseline!).cpuUsPerRequest;
      const cpuRatio = subjectCpu !== null && baselineCpu !== null && subjectCpu > 0 ? baselineCpu / subjectCpu : null;
      return {
        id: `article-${id}`,
        title: title!,
        subject: subject!,
        baseline: baseline!,
        minRpsRatio: MIN_RPS_RATIO,
        rpsRatio,
        cpuRatio,
        ok: rpsRatio >= MIN_RPS_RATIO,
      };
    });

    const javascript = await measureJavaScript(pageUrl);
    const lighthouse = options.lighthouse === false ? { score: null, ok: false, error: 'skipped (BENCH_LIGHTHOUSE=0)' } : await runLighthouse(pageUrl, log);

    const ok =
      comparisons.every((c) => c.ok) && javascript.ok && (lighthouse.ok || options.lighthouse === false) && summaries.every((s) => s.errors + s.non2xx === 0);
    return {
      date: new Date().toISOString(),
      article,
      pinned: canPin,
      settings,
      nginx: nginxVersion,
      page: { htmlBytes: plain.length, gzipBytes: gz.body.length, brotliBytes: br.headers['content-encoding'] === 'br' ? br.body.length : null },
      scenarios: summaries,
      comparisons,
      javascript,
      lighthouse,
      ok,
    };
  } finally {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    siteDist?.remove();
  }
}

/**
 * A private copy of the site build (SITE_DIST, else site/dist), so that a rebuild running
 * meanwhile (tests, a colleague) cannot pull it away mid-bench. It lives under
 * site/node_modules/.cache so that its imports still resolve to the site's packages.
 */
async function snapshotSiteBuild(log: (line: string) => void): Promise<{ dir: string; remove: () => void }> {
  const source = process.env.SITE_DIST ?? join(root, 'site', 'dist');
  const entry = join(source, 'server', 'entry.mjs');
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    // A build finished a few seconds ago and not restarted since.
    if (existsSync(entry) && Date.now() - statSync(entry).mtimeMs > 5_000) {
      const dir = join(root, 'site', 'node_modules', '.cache', 'obmen-bench', `dist-${process.pid}`);
      rmSync(dir, { recursive: true, force: true });
      cpSync(source, dir, { recursive: true });
      if (existsSync(entry) && existsSync(join(dir, 'server', 'entry.mjs'))) return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
      rmSync(dir, { recursive: true, force: true });
    }
    if (Date.now() > deadline) throw new Error(`no complete site build at ${source}: run "pnpm build" first`);
    log(`[bench-article] waiting for a complete site build at ${source}`);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
}

/** The body as sent (no decoding), with status and headers. */
async function rawBody(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { request } = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

export function articleBenchTable(result: TArticleBenchResult): string {
  const fmt = (value: number | null | undefined, digits = 0) =>
    value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits);
  const lines = [
    `| Scenario | req/s | p50 ms | p99 ms | server CPU µs/req | bytes/response | errors |`,
    `|---|---:|---:|---:|---:|---:|---:|`,
    ...result.scenarios.map(
      (s) => `| ${s.title} | ${fmt(s.rps)} | ${fmt(s.p50Ms)} | ${fmt(s.p99Ms)} | ${fmt(s.cpuUsPerRequest)} | ${s.bytesPerResponse} | ${s.errors + s.non2xx} |`,
    ),
    '',
    `| Comparison | req/s ratio | target | CPU efficiency (nginx µs / BFF µs) | verdict |`,
    `|---|---:|---:|---:|---|`,
    ...result.comparisons.map((c) => `| ${c.title} | ${fmt(c.rpsRatio, 2)}x | >= ${c.minRpsRatio}x | ${fmt(c.cpuRatio, 2)}x | ${c.ok ? 'met' : 'MISSED'} |`),
    '',
    `| Article page, signed out | figure | target | verdict |`,
    `|---|---:|---:|---|`,
    `| JavaScript downloaded, gzipped (${result.javascript.files.length} files + inline) | ${(result.javascript.gzipBytes / 1024).toFixed(1)} KB | <= ${result.javascript.limitBytes / 1024} KB | ${result.javascript.ok ? 'met' : 'MISSED'} |`,
    `| Lighthouse performance, mobile preset | ${result.lighthouse.score ?? 'n/a'} | 100 | ${result.lighthouse.ok ? 'met' : result.lighthouse.score === null ? `NOT RUN: ${result.lighthouse.error}` : 'MISSED'} |`,
    `| HTML of the page (identity / gzip / brotli) | ${result.page.htmlBytes} / ${result.page.gzipBytes} / ${result.page.brotliBytes ?? 'n/a'} B | | |`,
  ];
  return lines.join('\n');
}

if (import.meta.main) {
  const out = process.env.BENCH_OUT ?? join(root, 'bench-article-results.json');
  try {
    const result = await runArticleBench({
      rounds: envNumber('BENCH_ROUNDS', 3, { min: 1 }),
      duration: envNumber('BENCH_DURATION', 8, { min: 1 }),
      warmup: envNumber('BENCH_WARMUP', 2),
      connections: envNumber('BENCH_CONNECTIONS', 50, { min: 1 }),
      article: process.env.BENCH_ARTICLE ?? '/article/fees',
      lighthouse: process.env.BENCH_LIGHTHOUSE !== '0',
      ...(process.env.BENCH_BFF_URL ? { bffUrl: process.env.BENCH_BFF_URL } : {}),
    });
    const header =
      `Obmen article bench: ${result.settings.rounds} rounds x (${result.settings.warmup} s warm-up + ${result.settings.duration} s), ` +
      `${result.settings.connections} connections, Node ${process.version}, ${result.nginx}, ` +
      (result.pinned ? 'servers on CPU 0, load generator on CPU 1' : 'unpinned') +
      '; medians of the rounds.';
    console.log(`\n${header}\n\n${articleBenchTable(result)}\n`);
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.error(`[bench-article] figures written to ${out}`);
    process.exit(result.ok ? 0 : 1);
  } catch (err) {
    console.error(`[bench-article] ${err instanceof Error ? err.stack : String(err)}`);
    await stopAll();
    process.exit(1);
  }
}
