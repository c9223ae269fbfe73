import WebSocket from 'ws';
import type { TSocketMessage } from '@obmen/shared';

/** A test browser's realtime socket: every message kept, waits bounded (they fail, never hang). */
export type TTestSocket = {
  ws: WebSocket;
  messages: TSocketMessage[];
  /** Resolves with the first message (already received or coming) that matches. */
  next(match: (message: TSocketMessage) => boolean, limitMs?: number): Promise<TSocketMessage>;
  closed: Promise<{ code: number; at: number }>;
};

export type TRefused = { refused: number; body: string };

export function openSocket(
  base: string,
  options: { origin?: string; cookie?: string; since?: number | string; bsince?: number | string; ops?: boolean } = {},
): Promise<TTestSocket | TRefused> {
  const url = new URL('/ws', base.replace(/^http/, 'ws'));
  if (options.ops) url.searchParams.set('ops', '1');
  if (options.since !== undefined) url.searchParams.set('since', String(options.since));
  if (options.bsince !== undefined) url.searchParams.set('bsince', String(options.bsince));
  const headers: Record<string, string> = {};
  if (options.origin) headers.origin = options.origin;
  if (options.cookie) headers.cookie = options.cookie;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const messages: TSocketMessage[] = [];
    const waiters: Array<{ match: (m: TSocketMessage) => boolean; resolve: (m: TSocketMessage) => void }> = [];
    const closed = new Promise<{ code: number; at: number }>((done) => ws.on('close', (code) => done({ code, at: Date.now() })));
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as TSocketMessage;
      messages.push(message);
      for (const waiter of [...waiters]) {
        if (waiter.match(message)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk));
      res.on('end', () => resolve({ refused: res.statusCode ?? 0, body }));
    });
    ws.on('error', (err) => reject(err));
    ws.on('open', () =>
      resolve({
        ws,
        messages,
        closed,
        next(match, limitMs = 10_000) {
          const found = messages.find(match);
          if (found) return Promise.resolve(found);
          return new Promise((done, fail) => {
            const timer = setTimeout(() => fail(new Error(`no matching message within ${limitMs} ms; got ${JSON.stringify(messages)}`)), limitMs);
            waiters.push({
              match,
              resolve: (m) => {
                clearTimeout(timer);
                done(m);
              },
            });
          });
        },
      }),
    );
  });
}

export function isSocket(value: TTestSocket | TRefused): value is TTestSocket {
  return 'ws' in value;
}

export async function mustOpen(base: string, options: Parameters<typeof openSocket>[1]): Promise<TTestSocket> {
  const result = await openSocket(base, options);
  if (!isSocket(result)) throw new Error(`socket refused: ${result.refused} ${result.body}`);
  return result;
}

/** Every event seq of the user seen on this socket, in arrival order. */
export function seqs(socket: TTestSocket): number[] {
  return socket.messages.flatMap((m) => (m.type === 'events' ? m.events.map((e) => e.seq) : []));
}
