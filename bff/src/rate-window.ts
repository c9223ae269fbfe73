import { clientKey } from '@obmen/shared';

export type TRateWindowOptions = {
  /** Requests per client per window; beyond, refused until the window ends. */
  perWindow: number;
  windowMs?: number;
  /** Clients remembered at once (the oldest is forgotten first): memory stays bounded. */
  maxClients?: number;
  now?: () => number;
};

/**
 * Fixed windows per client address (IPv6 per /64), in this process's memory: for traffic that
 * changes no user state (front-end error reports, paths that do not exist), where a counter
 * per BFF instance is protection enough. `hit` answers 0 when the request may pass, otherwise
 * the seconds until the window ends (for Retry-After).
 */
export function createRateWindow(options: TRateWindowOptions): { hit: (ip: string) => number } {
  const windowMs = options.windowMs ?? 60_000;
  const maxClients = options.maxClients ?? 10_000;
  const now = options.now ?? Date.now;
  const clients = new Map<string, { start: number; hits: number }>();
  return {
    hit(ip) {
      const key = clientKey(ip);
      const t = now();
      let entry = clients.get(key);
      if (!entry || t - entry.start >= windowMs) {
        if (entry) clients.delete(key);
        else if (clients.size >= maxClients) clients.delete(clients.keys().next().value!);
        entry = { start: t, hits: 0 };
        clients.set(key, entry);
      }
      entry.hits++;
      if (entry.hits <= options.perWindow) return 0;
      return Math.max(1, Math.ceil((entry.start + windowMs - t) / 1000));
    },
  };
}
