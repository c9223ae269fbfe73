/// <reference types="astro/client" />
import type {
  TPageLog,
  TFooterImage,
  TLocale,
  TMenus,
  TSiteSettings,
  TUser,
  TBalance,
  TWallet,
  TUnreadMsgs,
  TNotification,
  TChatListItem,
} from '@obmen/shared';
import type { Dispatcher } from 'undici';
import type { TTranslate } from './lib/i18n.ts';
import type { TTheme } from '@obmen/shared/theme';
import type { TPageConfig } from './lib/core.ts';

declare global {
  namespace App {
    interface Locals {
      /** From the BFF (bff/src/plugins/site.ts): the front-end build version. */
      fv: string;
      /** The visitor's address: every server-side call to the core passes it on. */
      clientIp: string;
      /** From the BFF: this request's id (x-request-id), sent on with every call to the core. */
      requestId?: string;
      /** From the BFF: its pino logger for this request (reqId bound); the site's own in `astro dev`. */
      log: TPageLog;
      /** Came over https (decided once by the BFF): the session cookie is Secure. */
      https: boolean;
      /** The BFF's validated configuration (what pages read of it). */
      config: TPageConfig;
      /** The BFF's one pooled client to the core (site/src/lib/core.ts). */
      core: Dispatcher;
      locale: TLocale;
      /** The reader's time zone (the browser's `tz` cookie, checked), UTC until it is known. */
      timeZone: string;
      /** The reader's theme (the `theme` cookie, checked): the layout's `data-theme` on <html>. */
      theme: TTheme;
      t: TTranslate;
      user: TUser;
      siteSettings: TSiteSettings;
      menus: TMenus;
      footerImages: TFooterImage[];
      totalBalance?: TBalance;
      wallets?: TWallet[];
      unreadMsgs?: TUnreadMsgs;
      /** The signed-in visitor's private chats (GET /api/chat/list), for the chat sidebar. */
      chats?: TChatListItem[];
      notifications?: TNotification[];
      /** The Bearer token for server-side calls to the core on behalf of this visitor. */
      sessionToken?: string;
      /** The middleware has asked the core for the layout (a rewrite must not ask again). */
      layoutLoaded?: boolean;
      /** The core did not answer: pages show the maintenance page with a 503. */
      unavailable?: boolean;
    }
  }
}
