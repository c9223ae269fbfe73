import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { API_BODY_LIMIT_BYTES, loggerOptions, oneLineRequestLogs } from '@obmen/shared';
import app from './app.ts';
import { answerError } from './errors.ts';
import { loadConfig } from './config.ts';
import { createFrontDoor } from './front-door.ts';
import { genRequestId } from './request-id.ts';
import { stopOnSignals } from '@obmen/shared/shutdown';

const config = loadConfig();
const frontDoor = createFrontDoor();
const server = Fastify({
  serverFactory: frontDoor.serverFactory,
  logger: loggerOptions(config.LOG_LEVEL, 'bff', pino.destination({ sync: false })),
  genReqId: genRequestId,
  // Per-request lines cost CPU on every request: one per request, none with LOG_REQUESTS=false.
  logController: oneLineRequestLogs(new LogController({ disableRequestLogging: !config.LOG_REQUESTS })),
  trustProxy: config.TRUST_PROXY ?? false,
  bodyLimit: API_BODY_LIMIT_BYTES,
  // A URL the router cannot read gets the project's error shape too.
  frameworkErrors: answerError,
});

await server.register(app, { config, frontDoor });

stopOnSignals(server, config.SHUTDOWN_GRACE_MS);

const address = await server.listen({ host: config.HOST, port: config.PORT });
server.log.info(
  { address, host: config.HOST, nodeEnv: config.NODE_ENV },
  `listening on ${address}; development helpers (/api/dev/*, /dev/*) answer loopback clients only${config.NODE_ENV === 'production' ? ' (and are off in production)' : ''}`,
);
