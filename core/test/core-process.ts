import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { TEST_SCRYPT_LN } from './helpers.ts';

const SERVER = new URL('../src/server.ts', import.meta.url).pathname;

export type TLogLine = { level: number; msg: string; [key: string]: unknown };

/** The real core (src/server.ts) as a child process on a free port, its JSON log collected. */
export type TCoreProcess = {
  url: string;
  /** Every log line so far, parsed. */
  lines: TLogLine[];
  child: ChildProcess;
  exited: Promise<number | null>;
  /** SIGKILL, and wait for the process to be gone. */
  kill(): Promise<void>;
  stop(): Promise<void>;
};

export async function startCore(env: Record<string, string>, startTimeoutMs = 60_000): Promise<TCoreProcess> {
  const child = spawn(process.execPath, [SERVER], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      // As in the tests in process: a test names the jobs it wants running.
      JOBS: 'none',
      // The test cost only where the config accepts it (NODE_ENV=test).
      ...((env.NODE_ENV ?? 'test') === 'test' ? { PASSWORD_SCRYPT_LN: String(TEST_SCRYPT_LN) } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: TLogLine[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`core did not start in ${startTimeoutMs} ms: ${stderr.join('')}`)), startTimeoutMs);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`core exited (${code}) before listening: ${stderr.join('')}`));
    });
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: TLogLine;
      try {
        line = JSON.parse(text) as TLogLine;
      } catch {
        return;
      }
      lines.push(line);
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(line.msg);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  const url = await listening;
  return {
    url,
    lines,
    child,
    exited,
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
