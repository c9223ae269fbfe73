import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { networkInterfaces } from 'node:os';

export type TRawAnswer = { status: number; headers: IncomingHttpHeaders; body: string };

/**
 * One HTTP/1.1 request over a real socket, the path sent exactly as given (fetch would
 * normalize `..` and `//`), optionally from a chosen local address of this machine.
 */
export function rawRequest(
  origin: string,
  path: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; localAddress?: string } = {},
): Promise<TRawAnswer> {
  const target = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: target.port,
        path,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: false,
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** An IPv4 address of this machine that is not loopback (none: the tests that need one skip). */
export function nonLoopbackAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  }
  return undefined;
}
