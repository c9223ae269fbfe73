import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyServerFactory } from 'fastify';

/**
 * Answers a request before Fastify sees it (no routing, no request/reply objects, no hooks) and
 * returns true, or returns false to leave it to Fastify. `toFastify` hands a request it took
 * over on to Fastify after all.
 */
export type TFrontHandler = (req: IncomingMessage, res: ServerResponse, toFastify: () => void) => boolean;

export type TFrontDoor = {
  /** For `Fastify({ serverFactory })`: the http server whose requests pass the front handlers first. */
  serverFactory: FastifyServerFactory<Server>;
  /**
   * Adds a front handler (a plugin does it once the app is built); the first that takes a
   * request answers it. Returns its removal (a plugin calls it as the server closes).
   */
  use: (handler: TFrontHandler) => () => void;
};

/**
 * The BFF's http server, made through Fastify's documented `serverFactory`: where plugins (the
 * page cache's hits, the /api proxy) may answer a request from the `request` event itself.
 */
export function createFrontDoor(): TFrontDoor {
  let handlers: TFrontHandler[] = [];
  return {
    serverFactory: (handler, opts) => {
      // Fastify's own options, its defaults filled in.
      const options = opts as {
        http?: ServerOptions;
        keepAliveTimeout: number;
        requestTimeout: number;
        connectionTimeout: number;
        maxRequestsPerSocket: number;
      };
      const server: Server = createServer(options.http ?? {}, (req, res) => {
        const toFastify = () => handler(req, res);
        for (const front of handlers) if (front(req, res, toFastify)) return;
        handler(req, res);
      });
      // What Fastify sets on the server it makes itself (lib/server.js), from its own defaults.
      server.keepAliveTimeout = options.keepAliveTimeout;
      server.requestTimeout = options.requestTimeout;
      server.setTimeout(options.connectionTimeout);
      if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
      return server;
    },
    use: (handler) => {
      handlers = [...handlers, handler];
      return () => {
        handlers = handlers.filter((known) => known !== handler);
      };
    },
  };
}
