import Fastify, { LogController } from 'fastify';
import { API_BODY_LIMIT_BYTES } from '@obmen/shared';
import app from './app.ts';
import { loadConfig } from './config.ts';
import pino from 'pino';
import { loggerOptions, oneLineRequestLogs } from '@obmen/shared';
import { makeGenReqId } from './request-id.ts';
import { stopOnSignals } from '@obmen/shared/shutdown';

const config = loadConfig();
const server = Fastify({
  logger: loggerOptions(config.LOG_LEVEL, 'core', pino.destination({ sync: false })),
  logController: oneLineRequestLogs(new LogController()),
  genReqId: makeGenReqId(config.TRUST_PROXY),
  // Bodies bigger than this are never legitimate for the JSON/form API; uploads get their own limit.
  bodyLimit: API_BODY_LIMIT_BYTES,
  // A fresh PGlite directory on a busy machine can take longer than Fastify's default 10 s to open.
  pluginTimeout: 60_000,
  // The BFF is the only expected caller: trust its X-Forwarded-For for the client address.
  trustProxy: config.TRUST_PROXY,
});

await server.register(app, { config });

stopOnSignals(server, config.SHUTDOWN_GRACE_MS);

const address = await server.listen({ host: config.HOST, port: config.PORT });
server.log.info(
  { address, nodeEnv: config.NODE_ENV },
  config.NODE_ENV === 'production' ? `listening on ${address}` : `listening on ${address}; development helpers (/api/dev/*) answer loopback clients only`,
);
