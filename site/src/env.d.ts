/// <reference types="astro/client" />
import type { TFooterImage, TLocale, TMenus, TSiteSettings, TUser, TBalance, TWallet, TUnreadMsgs, TNotification } from '@obmen/shared';
import type { TTranslate } from './lib/i18n.ts';

declare global {
  namespace App {
    interface Locals {
      /** From the BFF: the front-end build version. */
      fv: string;
      clientIp: string;
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
