import pino from 'pino';
import { loggerOptions } from '@obmen/shared';

/**
 * The site's own pino logger, for what is not tied to one request (a missing dictionary key)
 * and for pages rendered by the Astro dev server, which has no BFF to hand them its logger.
 * Page renders served by the BFF log through `Astro.locals.log`, the BFF's request logger.
 */
export const siteLog = pino(loggerOptions(process.env.LOG_LEVEL ?? 'info', 'site'));
