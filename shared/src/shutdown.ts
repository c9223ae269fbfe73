/**
 * The graceful stop of core and BFF alike: on SIGTERM or SIGINT, stop taking connections, let
 * the requests in flight finish, and exit; past the grace period, exit anyway (with status 1).
 */
export function stopOnSignals(
  server: { close(): Promise<unknown>; log: { info(obj: object, msg: string): void; error(msg: string): void } },
  graceMs: number,
): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    server.log.info({ signal }, 'shutting down: finishing in-flight requests');
    setTimeout(() => {
      server.log.error('graceful shutdown timed out');
      process.exit(1);
    }, graceMs).unref();
    await server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
