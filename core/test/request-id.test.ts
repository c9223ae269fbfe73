import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { REQUEST_ID_HEADER, loggerOptions } from '@obmen/shared';
import { makeGenReqId } from '../src/request-id.ts';
import { build } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const incoming = (remoteAddress: string, id?: string) =>
  ({ headers: id === undefined ? {} : { [REQUEST_ID_HEADER]: id }, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('core request ids', () => {
  const genReqId = makeGenReqId('127.0.0.1, ::1');

  it("takes the BFF's x-request-id only from TRUST_PROXY, and only a sane one", () => {
    expect(genReqId(incoming('127.0.0.1', 'bff-id-1'))).toBe('bff-id-1');
    expect(genReqId(incoming('::1', 'bff-id-2'))).toBe('bff-id-2');
    expect(genReqId(incoming('203.0.113.9', 'forged'))).toMatch(UUID);
    expect(genReqId(incoming('127.0.0.1', 'two words'))).toMatch(UUID);
    expect(genReqId(incoming('127.0.0.1', 'a'.repeat(65)))).toMatch(UUID);
    expect(genReqId(incoming('127.0.0.1'))).toMatch(UUID);
  });

  it('the app logs a request under the id its trusted proxy sent, never a forged one', async () => {
    const raw: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        raw.push(chunk.toString('utf8'));
        callback();
      },
    });
    const core = await build('pglite', {}, { loggerInstance: pino(loggerOptions('info', 'core'), stream) });
    try {
      await core.app.inject({ url: '/api/health', headers: { [REQUEST_ID_HEADER]: 'from-bff' } });
      await core.app.inject({ url: '/api/health', headers: { [REQUEST_ID_HEADER]: 'forged' }, remoteAddress: '203.0.113.9' });
    } finally {
      await core.close();
    }
    const ids = raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { reqId?: string; msg: string; service?: string })
      .filter((line) => line.msg === 'request completed');
    // Every line says which service wrote it.
    expect(ids.map((line) => line.service)).toEqual(['core', 'core']);
    expect(ids.map((line) => line.reqId)).toHaveLength(2);
    expect(ids[0]!.reqId).toBe('from-bff');
    expect(ids[1]!.reqId).toMatch(UUID);
  });
});
