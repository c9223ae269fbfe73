/**
 * What every bench script needs the same way: CPU pinning, CPU time from /proc, stopping a
 * child process for sure, medians.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Servers on CPU 0 and the load generator on CPU 1 need two CPUs and `taskset`. */
export const canPin = availableParallelism() >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

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

/** SIGTERM, then SIGKILL after `graceMs`: resolves once the process is gone. */
export function stopChild(child: ChildProcess, graceMs = 5_000): Promise<void> {
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

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
