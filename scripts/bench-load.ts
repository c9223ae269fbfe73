/**
 * The load generator of `pnpm bench`, run as its own process so that bench.ts can pin it to a
 * core of its own (taskset). Takes one JSON argument (TLoadOptions), runs autocannon, prints
 * `measuring` once the warm-up is over, then one JSON line (TLoadResult) on stdout. Not meant to be run by hand, but it works:
 *   node scripts/bench-load.ts '{"url":"http://127.0.0.1:4200/api/site","connections":50,"duration":10,"warmup":2}'
 */
import { createRequire } from 'node:module';

export type TLoadOptions = {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Seconds measured. */
  duration: number;
  /** Seconds of load before the measured run (its figures are dropped). */
  warmup: number;
  pipelining?: number;
};

export type TLoadResult = {
  requests: number;
  rps: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU time the load generator itself used, as a share of one core: near 1 means it was the bottleneck. */
  loadgenCpu: number;
};

type TAutocannonResult = {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
};
type TAutocannon = (opts: Record<string, unknown>) => Promise<TAutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as TAutocannon;

/** onMeasuring: called between the warm-up and the measured run (bench.ts samples server CPU then). */
export async function load(options: TLoadOptions, onMeasuring: () => void = () => {}): Promise<TLoadResult> {
  const base = {
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    timeout: 10,
  };
  if (options.warmup > 0) await autocannon({ ...base, duration: options.warmup });
  onMeasuring();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await autocannon({ ...base, duration: options.duration });
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    loadgenCpu: (cpu.user + cpu.system) / wallUs,
  };
}

if (import.meta.main) {
  const options = JSON.parse(process.argv[2] ?? '') as TLoadOptions;
  const result = await load(options, () => process.stdout.write('measuring\n'));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
