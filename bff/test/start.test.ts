import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { until } from '../../core/test/helpers.ts';
import { freePort } from '../../scripts/supervise.ts';
import { makeFakeSiteDist } from './helpers.ts';

const root = join(import.meta.dirname, '../..');

/** Running: it exists and is no zombie (a zombie has ended; only its parent has not read its status yet). */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

describe.skipIf(process.platform !== 'linux')('pnpm start / serve and signals', () => {
  const site = makeFakeSiteDist();
  /** Every process the test started, killed services first: nothing outlives a failed test. */
  const started: number[] = [];
  afterAll(() => {
    for (const pid of started.reverse()) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    site.remove();
  });

  it('SIGTERM to the node shim that pnpm runs stops the supervisor, the development chain, the core and the BFF, each finishing its requests', async () => {
    const [port, corePort] = [await freePort(), await freePort()];
    // What `pnpm serve` runs: node_modules/.bin/node, pnpm's shell script around the real binary.
    const shim = spawn(join(root, 'node_modules/.bin/node'), ['scripts/start.ts'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'info',
        PORT: String(port),
        CORE_PORT: String(corePort),
        DATA_DIR: 'memory://',
        DOCUMENT_KEY: randomBytes(32).toString('base64'),
        PASSWORD_SCRYPT_LN: '12',
        SITE_DIST: site.dir,
      },
    });
    started.push(shim.pid!);
    let output = '';
    shim.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    shim.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    await until('the stack up', async () => output.includes('[start] Obmen is up'), 120_000);
    const [supervisor] = childrenOf(shim.pid!);
    expect(supervisor).toBeDefined();
    const services = childrenOf(supervisor!);
    started.push(supervisor!, ...services);
    // The development chain (anvil: no EVM_RPC_URL given), the core and the BFF.
    expect(services).toHaveLength(3);
    expect(await answers(`http://127.0.0.1:${port}/local/healthcheck`)).toBe(true);

    process.kill(shim.pid!, 'SIGTERM');

    await until('every process gone', async () => ![supervisor!, ...services].some(isRunning), 30_000);
    expect(await answers(`http://127.0.0.1:${port}/local/livez`)).toBe(false);
    expect(await answers(`http://127.0.0.1:${corePort}/api/health`)).toBe(false);
    // Both closed their servers (in-flight requests finished) rather than being killed.
    const shutdowns = output.split('\n').filter((line) => line.includes('shutting down: finishing in-flight requests'));
    expect(shutdowns.map((line) => (JSON.parse(line) as { service: string }).service).sort()).toEqual(['bff', 'core']);
  }, 180_000);
});
