import type { Socket } from 'node:net';
import WebSocket from 'ws';

/**
 * The relay's fast path (the fan-out bench): a message for many browser sockets is framed once
 * and the same bytes are written to each, instead of `ws.send()` encoding and framing it per
 * socket. Uses the `ws` internals @fastify/websocket's sockets are made of (pinned version,
 * bff/package.json): the static `Sender.frame` and the socket's TCP stream. Safe because the
 * server never compresses (perMessageDeflate is off), so ws's sender never queues a frame that
 * a direct write could overtake; `bufferedAmount` still counts these bytes.
 */
type TFrameOptions = { fin: boolean; rsv1: boolean; opcode: number; mask: boolean; readOnly: boolean };
const { Sender } = WebSocket as unknown as { Sender: { frame(data: Buffer, options: TFrameOptions): Buffer[] } };

const TEXT = 1;

/** One unmasked, final text frame (server → client) holding `data` (UTF-8 JSON). */
export function frameText(data: Buffer): Buffer {
  const parts = Sender.frame(data, { fin: true, rsv1: false, opcode: TEXT, mask: false, readOnly: true });
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** Sockets written to in this turn of the event loop: corked until it ends. */
const corked = new Set<Socket>();

function uncorkAll(): void {
  for (const tcp of corked) tcp.uncork();
  corked.clear();
}

/**
 * Writes a frame made by frameText to an open socket. The socket stays corked until the end of
 * this turn of the event loop (setImmediate), so that the frames one turn gives a socket (a busy
 * link hands over several messages in one read) leave in one write, not one system call each.
 * Whatever ws writes meanwhile (a pong, a close frame) queues behind them in the same stream, in
 * order; end() sends what is corked.
 */
export function writeFrame(socket: WebSocket, frame: Buffer): void {
  const tcp = (socket as unknown as { _socket: Socket })._socket;
  if (!corked.has(tcp)) {
    if (!corked.size) setImmediate(uncorkAll);
    tcp.cork();
    corked.add(tcp);
  }
  tcp.write(frame);
}
