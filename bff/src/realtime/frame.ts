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

/** Writes a frame made by frameText to an open socket. */
export function writeFrame(socket: WebSocket, frame: Buffer): void {
  (socket as unknown as { _socket: Socket })._socket.write(frame);
}
