/// <reference types="astro/client" />
import type { TPageLog, TFooterImage, TLocale, TMenus, TSiteSettings, TUser, TBalance, TWallet, TUnreadMsgs, TNotification } from '@obmen/shared';
import type { TTranslate } from './lib/i18n.ts';

declare global {
  namespace App {
    interface Locals {
      /** From the BFF: the front-end build version. */
      fv: string;
      clientIp: string;
      /** From the BFF: this request's id (x-request-id), sent on with every call to the core. */
      requestId?: string;
      /** From the BFF: its pino logger for this request (reqId bound); the site's own in `astro dev`. */
      log: TPageLog;
      locale: TLocale;
      t: TTranslate;
      user: TUser;
      siteSettings: TSiteSettings;
      menus: TMenus;
      footerImages: TFooterImage[];
      totalBalance?: TBalance;
      wallets?: TWallet[];
      unreadMsgs?: TUnreadMsgs;
      notifications?: TNotification[];
      /** The Bearer token for server-side calls to the core on behalf of this visitor. */
      sessionToken?: string;
      /** The core did not answer: pages show the maintenance page with a 503. */
      unavailable?: boolean;
    }
  }
}
export {};
