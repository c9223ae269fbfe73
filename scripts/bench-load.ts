/**
 * The load generator of every bench, run as its own process so that the bench can pin it to a
 * CPU of its own (taskset; bench-common.ts runLoad()). Takes one JSON argument (TLoadOptions),
 * runs autocannon, prints `measuring` once the warm-up is over, then one JSON line
 * (TLoadResult) on stdout. Not meant to be run by hand, but it works:
 *   node scripts/bench-load.ts '{"url":"http://127.0.0.1:4200/api/site","connections":50,"duration":10,"warmup":2}'
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

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
  /** Requests per second over all connections; unset: as fast as possible. */
  overallRate?: number;
  /** Replace [<id>] in the body with a fresh id per request. */
  idReplacement?: boolean;
  /**
   * Requests made per request by a bench's own code: `module` (relative to the repository root)
   * exports `name`, called once with `plan`, returning autocannon's `requests` (setupRequest
   * functions included), shared by the warm-up and the measured run.
   */
  requestsFrom?: { module: string; name: string; plan: unknown };
};

export type TLoadResult = {
  requests: number;
  rps: number;
  /** Seconds the measured run took (autocannon's own figure). */
  seconds: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** 2xx answers of the measured run, and of the warm-up. */
  ok: number;
  warmupOk: number;
  statusCodes: Record<string, number>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** CPU time the load generator itself used, as a share of one core: near 1 means it was the bottleneck. */
  loadgenCpu: number;
};

type TAutocannonResult = {
  requests: { average: number; total: number };
  latency: { p50: number; p90: number; p99: number; max: number; mean: number };
  statusCodeStats?: Record<string, { count: number }>;
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
};
type TAutocannon = (opts: Record<string, unknown>) => Promise<TAutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as TAutocannon;

/** onMeasuring: called between the warm-up and the measured run (the bench samples server CPU then). */
export async function load(options: TLoadOptions, onMeasuring: () => void = () => {}): Promise<TLoadResult> {
  const base: Record<string, unknown> = {
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    pipelining: options.pipelining ?? 1,
    timeout: 10,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    ...(options.idReplacement ? { idReplacement: true } : {}),
  };
  if (options.requestsFrom) {
    const { module, name, plan } = options.requestsFrom;
    const made = (await import(pathToFileURL(join(import.meta.dirname, '..', module)).href)) as Record<string, (plan: unknown) => unknown[]>;
    base.requests = made[name]!(plan);
  }
  const warmupOk = options.warmup > 0 ? (await autocannon({ ...base, duration: options.warmup }))['2xx'] : 0;
  onMeasuring();
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  const result = await autocannon({ ...base, duration: options.duration });
  const wallUs = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count;
  return {
    requests: result.requests.total,
    rps: result.requests.total / result.duration,
    seconds: result.duration,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    ok: result['2xx'],
    warmupOk,
    statusCodes,
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
  // A requests module may hold handles open (none should, but the bench waits for this exit).
  process.exit(0);
}
