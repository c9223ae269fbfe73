/**
 * What start.ts (production and tests) and dev.ts (`pnpm dev`) share: `.env`, child processes
 * that stop together, and waiting for a health URL.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

export const BFF_SCRIPT = 'bff/src/server.ts';

/**
 * The BFF's V8 flags. A young generation of at most 4 MB per semi-space (V8 grows it to 16 MB
 * under a burst of allocations and keeps it): 2,000 websockets opened at once grew the BFF by
 * 17–21 KB each with the default, 7–11 KB at 1, 2 or 4 MB (pnpm bench fanout,
 * BENCH_FANOUT_BFF_NODE_ARGS for others). At 1 MB the scavenges took a quarter of the BFF's CPU
 * on proxied calls (about 140 µs a call against 105 at 4 MB, pnpm bench api).
 */
export const BFF_NODE_ARGS = ['--max-semi-space-size=4'];

/** Where mailed and referral links point: PUBLIC_URL, else the site as started here (PORT). */
export function sitePublicUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.PUBLIC_URL || `http://localhost:${env.PORT ?? '3000'}`;
}

/** `.env` at the top of the checkout, when there is one; variables already set win over it. */
export function loadDotEnv(): void {
  const file = join(root, '.env');
  if (existsSync(file)) process.loadEnvFile(file);
}

/** How often the supervisor looks whether its parent is still there. */
const PARENT_CHECK_MS = 250;

export type TSupervisor = {
  /** `node <args>` (or `command <args>`) as a child; its exit stops the others (and us) with its code. */
  run(name: string, args: string[], env: NodeJS.ProcessEnv, options?: Pick<SpawnOptions, 'cwd' | 'stdio'> & { command?: string }): ChildProcess;
  stop(code: number): Promise<void>;
};

/** Children get SIGTERM on our SIGTERM/SIGINT, the last started first, and finish their in-flight requests. */
export function supervise(tag: string): TSupervisor {
  const children: ChildProcess[] = [];
  let stopping = false;
  const exited = (child: ChildProcess) => (child.exitCode === null && child.signalCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null);

  async function stop(code: number) {
    stopping = true;
    for (const child of [...children].reverse()) {
      child.kill('SIGTERM');
      await exited(child);
    }
    process.exit(code);
  }
  process.once('SIGTERM', () => void stop(0));
  process.once('SIGINT', () => void stop(0));
  // `pnpm start` runs us through node_modules/.bin/node, a shell script that does not exec node:
  // a SIGTERM sent to it ends the shell alone. Its end is ours too: we are handed to another
  // parent, and stop as if the signal had come here.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent && !stopping) void stop(0);
  }, PARENT_CHECK_MS).unref();

  function run(
    name: string,
    args: string[],
    env: NodeJS.ProcessEnv,
    { command = process.execPath, ...options }: Pick<SpawnOptions, 'cwd' | 'stdio'> & { command?: string } = {},
  ) {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', ...options, env: { ...process.env, ...env } });
    child.on('exit', (code, signal) => {
      if (stopping) return;
      console.error(`[${tag}] ${name} exited (${signal ?? code}); stopping the rest`);
      void stop(code ?? 1);
    });
    children.push(child);
    return child;
  }
  return { run, stop };
}

/**
 * `ops seed` (core/src/cli.ts seed) before the core starts, unless SEED=false: the catalogue of an
 * empty database and, outside production, the demo account (the core never seeds itself). Its
 * answer goes to our output; in development it carries the demo account's sign-in.
 */
export async function seedBeforeCore(tag: string, env: NodeJS.ProcessEnv, cli = 'core/src/cli.ts'): Promise<void> {
  const merged = { ...process.env, ...env };
  if (merged.SEED === 'false') return;
  const child = spawn(process.execPath, [cli, 'seed'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: merged });
  let answer = '';
  child.stdout!.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`ops seed failed (exit ${code})`);
  console.log(`[${tag}] seed: ${answer.replace(/\s+/g, ' ').trim()}`);
}

export async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not become healthy within ${timeoutMs} ms`);
}

/** A 127.0.0.1 port nothing listens on now (the system picks it; the caller binds it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The development chain (anvil, core/src/providers/evm/devchain.ts) as a child, when no EVM node
 * is configured (EVM_RPC_URL) outside production, unless EVM_DEV_CHAIN=false: on EVM_DEV_PORT
 * (unset: a free port), its chain kept in EVM_DEV_STATE when given, the test tokens deployed.
 * The seed and the core get its URL through our environment.
 */
export async function startDevChain(tag: string, supervisor: TSupervisor, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env.EVM_RPC_URL || env.EVM_DEV_CHAIN === 'false' || (env.NODE_ENV ?? 'development') === 'production') return;
  // Loaded only here: a production start never reads the development chain's code.
  const { anvilArgs, anvilBinary, deployDevTokens, waitForNode } = await import('../core/src/providers/evm/devchain.ts');
  const port = Number(env.EVM_DEV_PORT ?? (await freePort()));
  // The binary itself, not the package's node launcher, which exits before anvil has written its state.
  supervisor.run('chain', anvilArgs(port, env.EVM_DEV_STATE), {}, { command: anvilBinary() });
  const url = `http://127.0.0.1:${port}`;
  await waitForNode(url);
  await deployDevTokens(url);
  process.env.EVM_RPC_URL = url;
  process.env.EVM_CHAIN_ID = '31337';
  console.log(`[${tag}] development EVM chain at ${url} (anvil; USDT and USDC deployed)`);
}
