import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { REQUEST_ID_HEADER, isSaneRequestId } from '@obmen/shared';

/**
 * Fastify's genReqId for the core: the BFF's x-request-id, so both services log one request
 * under the same reqId; believed only from TRUST_PROXY (the BFF), like X-Forwarded-For.
 */
export function makeGenReqId(trustProxy: string): (req: IncomingMessage) => string {
  const trusted = proxyAddr.compile(trustProxy.split(',').map((address) => address.trim()));
  return (req) => {
    const given = req.headers[REQUEST_ID_HEADER];
    return isSaneRequestId(given) && trusted(req.socket.remoteAddress ?? '', 0) ? given : randomUUID();
  };
}
