/**
 * The one bench harness: what every bench script does the same way, so that each of them states
 * only its scenarios and its table.
 *   servers     startServer(): a Node script as a child process on a free loopback port (or a
 *               given one), pinned to the servers' CPU when asked, its output's tail kept for
 *               the error message, healthy before it returns; startProcess() for anything else
 *               (nginx). Every child is stopped at the end (stopAll(), in reverse order of
 *               start: a BFF before its core), on SIGINT/SIGTERM, and killed if this process
 *               exits anyway; one that dies early ends the bench.
 *   load        runLoad(): scripts/bench-load.ts (autocannon) in its own process on the load
 *               generator's CPU; the meters given (CPU time of the servers) are read when its
 *               warm-up ends and when it ends, and come back as the CPU seconds of the run.
 *               tempDir() gives a directory removed at exit.
 *   figures     cpuSeconds() and rssBytes() from /proc, median(), loadAverage().
 *   knobs       envNumber(), envList().
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { TLoadOptions, TLoadResult } from './bench-load.ts';
import { BFF_NODE_ARGS, BFF_SCRIPT, freePort, seedBeforeCore } from './supervise.ts';

export const root = join(import.meta.dirname, '..');

/** Servers on CPU 0 and the load generator on CPU 1 need two CPUs and `taskset`. */
export const canPin = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
export const SERVER_CPU = '0';
export const LOADGEN_CPU = '1';

/** `command args` on `cpu` when pinning is possible (and wanted), else as is. */
export function pinned(cpu: string, command: string, args: string[], pin = canPin): [string, string[]] {
  return pin ? ['taskset', ['-c', cpu, command, ...args]] : [command, args];
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/**
 * CPU seconds (user + system) a process has used, from /proc (Linux); with `withChildren`, its
 * child processes' too (nginx: master + workers). null when unknown.
 */
export function cpuSeconds(pid: number | undefined, withChildren = false): number | null {
  if (!pid) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let total = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    if (withChildren) {
      const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
      for (const kid of kids ? kids.split(/\s+/) : []) total += cpuSeconds(Number(kid), true) ?? 0;
    }
    return total;
  } catch {
    return null;
  }
}

/** Resident memory of a process in bytes, from /proc (Linux); null when unknown. */
export function rssBytes(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const line = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return line ? Number(line[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The machine's 1-minute load average (Linux): other work on it disturbs every figure. */
export function loadAverage(): number | null {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
}

// ---- knobs ----------------------------------------------------------------------------------

/** A number from the environment: at least `min` (default 0), whole unless `fraction`. */
export function envNumber(name: string, fallback: number, { min = 0, fraction = false }: { min?: number; fraction?: boolean } = {}): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (!fraction && !Number.isInteger(value))) {
    throw new Error(`${name} must be a ${fraction ? 'number' : 'whole number'}${min > 0 ? ` of at least ${min}` : ''}, got "${raw}"`);
  }
  return value;
}

/** A comma-separated choice among `all` from the environment; unset: all of them. */
export function envList<T extends string>(name: string, all: readonly T[]): T[] {
  const raw = process.env[name];
  if (!raw) return [...all];
  const picked = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean) as T[];
  const unknown = picked.filter((item) => !all.includes(item));
  if (unknown.length) throw new Error(`${name}: unknown ${unknown.join(', ')} (have ${all.join(', ')})`);
  return picked;
}

// ---- child processes ------------------------------------------------------------------------

export type TChild = { name: string; child: ChildProcess; pid: number | undefined; output: string[] };
export type TServer = TChild & { url: string; port: number };

const children: TChild[] = [];
let stopping = false;

/** A child process whose output's tail is kept; stopped by stopAll(); its early death ends the bench. */
export function startProcess(name: string, command: string, args: string[], env: NodeJS.ProcessEnv): TChild {
  const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 50) output.shift();
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const entry: TChild = { name, child, pid: child.pid, output };
  children.push(entry);
  child.once('exit', (code, signal) => {
    const index = children.indexOf(entry);
    if (index < 0 || stopping) return;
    children.splice(index, 1);
    console.error(`[bench] ${name} exited early (${signal ?? code}):\n${output.join('')}`);
    void stopAll().then(() => process.exit(1));
  });
  return entry;
}

/** SIGTERM, then SIGKILL after `graceMs`: resolves once the process is gone. */
function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Stops one child started here (and forgets it). */
export async function stopProcess(entry: TChild | null | undefined, graceMs = 10_000): Promise<void> {
  if (!entry) return;
  const index = children.indexOf(entry);
  if (index >= 0) children.splice(index, 1);
  await stopChild(entry.child, graceMs);
}

/** Stops every child still running, the last started first (a BFF does not log its core going away). */
export async function stopAll(): Promise<void> {
  stopping = true;
  for (const entry of children.splice(0).reverse()) await stopChild(entry.child, 10_000);
  stopping = false;
}

const tempDirs: string[] = [];

/** A fresh temporary directory, removed when this process exits. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

// Whatever way this process ends, no child outlives it and no temporary directory stays.
process.once('exit', () => {
  for (const { child } of children) child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.once(signal, () => void stopAll().then(() => process.exit(code)));
}

/** Polls `url` until it answers 2xx; fails at once when `what` exits, or after `timeoutMs`. */
export async function waitForHealth(url: string, what: TChild, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (what.child.exitCode !== null) throw new Error(`${what.name} exited (${what.child.exitCode}):\n${what.output.join('')}`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what.name} not healthy at ${url} within ${timeoutMs} ms:\n${what.output.join('')}`);
}

export type TServerSpec = {
  name: string;
  /** A Node script, relative to the repository root. */
  script: string;
  /** Its own variables (on top of this process's; DATABASE_URL and UPSTREAM_URL only when given here). */
  env: Record<string, string>;
  /** The path that answers 2xx once it is ready. */
  health: string;
  /** Default: a free one. */
  port?: number;
  /** On the servers' CPU (default: when pinning is possible). */
  pin?: boolean;
  nodeArgs?: string[];
};

/** A Node server on 127.0.0.1, started and healthy. */
export async function startServer(spec: TServerSpec): Promise<TServer> {
  const port = spec.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, ...spec.env, PORT: String(port), HOST: '127.0.0.1' };
  for (const name of ['DATABASE_URL', 'UPSTREAM_URL']) if (!(name in spec.env)) delete env[name];
  // A core gets its database as start.ts leaves it: `ops seed` of its own checkout first (one
  // from before that command, BENCH_WEBHOOKS_BEFORE, seeds in its core at start).
  const src = resolve(root, dirname(spec.script));
  if (spec.script.endsWith('core/src/server.ts') && existsSync(join(src, 'cli/seed.ts'))) await seedBeforeCore(spec.name, env, join(src, 'cli.ts'));
  // The BFF runs with the flags start.ts gives it.
  const flags = [...(spec.script === BFF_SCRIPT ? BFF_NODE_ARGS : []), ...(spec.nodeArgs ?? [])];
  const [command, args] = pinned(SERVER_CPU, process.execPath, [...flags, spec.script], spec.pin ?? canPin);
  // The very entry stopProcess() looks for.
  const server: TServer = Object.assign(startProcess(spec.name, command, args, env), { url: `http://127.0.0.1:${port}`, port });
  await waitForHealth(server.url + spec.health, server);
  return server;
}

/** Log, core and BFF settings every bench starts its servers with. */
export const QUIET = { LOG_LEVEL: 'warn', NODE_ENV: 'production', LOG_REQUESTS: 'false' };

// ---- load -----------------------------------------------------------------------------------

/** CPU seconds so far of something measured during a load, or null when unknown. */
export type TMeter = () => number | null;

/** The CPU seconds of these processes together (with their children: nginx's workers); null when one is unknown. */
export function cpuMeter(pids: Array<number | undefined>, withChildren = false): TMeter {
  return () => {
    let total = 0;
    for (const pid of pids) {
      const used = cpuSeconds(pid, withChildren);
      if (used === null) return null;
      total += used;
    }
    return total;
  };
}

export type TMeasuredLoad = TLoadResult & {
  /** Per meter given, the CPU seconds it used during the measured part of the load. */
  cpuSeconds: Array<number | null>;
  /** The load generator's own (taskset execs it: same pid). */
  loadgenCpuSeconds: number | null;
};

/** One load (scripts/bench-load.ts) in its own process, on the load generator's CPU when pinned. */
export function runLoad(options: TLoadOptions, meters: TMeter[] = [], pin = canPin): Promise<TMeasuredLoad> {
  const [command, args] = pinned(LOADGEN_CPU, process.execPath, ['scripts/bench-load.ts', JSON.stringify(options)], pin);
  const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const all: TMeter[] = [...meters, () => cpuSeconds(child.pid)];
  const sample = () => all.map((meter) => meter());
  return new Promise((resolve, reject) => {
    let before: Array<number | null> | null = null;
    let after: Array<number | null> | null = null;
    let result: TLoadResult | null = null;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'measuring') before = sample();
      else if (line.startsWith('{')) {
        after = sample();
        result = JSON.parse(line) as TLoadResult;
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0 || !result || !before || !after) return reject(new Error(`load generator failed (exit ${code})`));
      const [b, a] = [before as Array<number | null>, after as Array<number | null>];
      const used = a.map((end, i) => (end === null || b[i] === null || b[i] === undefined ? null : end - b[i]!));
      resolve({ ...(result as TLoadResult), cpuSeconds: used.slice(0, -1), loadgenCpuSeconds: used.at(-1) ?? null });
    });
  });
}

/** CPU µs per request (or per transfer) from CPU seconds and a count; null when either is unknown. */
export function usPer(seconds: number | null, count: number): number | null {
  return seconds === null || count <= 0 ? null : (seconds * 1e6) / count;
}
