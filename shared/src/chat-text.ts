/* Chat helpers without zod: the layout script (boot.ts) and the chat island use them. */

/** A piece of a message's text: plain text, or a web link found in it. */
export type TTextPart = { text: string; href?: string };

const LINK = /\bhttps?:\/\/[^\s<>"'`]+/gi;
const TRAILING = /[.,;:!?'")\]}]+$/;

/**
 * Splits a message into text and http(s) links, for pages that render each part as a text node
 * or an anchor (never HTML). Closing punctuation after a link stays text; a link that does not
 * parse as a URL stays text.
 */
export function splitLinks(text: string): TTextPart[] {
  const parts: TTextPart[] = [];
  let at = 0;
  for (const match of text.matchAll(LINK)) {
    const raw = match[0];
    const href = raw.replace(TRAILING, '');
    const start = match.index;
    let url: URL | null = null;
    try {
      url = new URL(href);
    } catch {
      url = null;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) continue;
    if (start > at) parts.push({ text: text.slice(at, start) });
    parts.push({ text: href, href: url.href });
    at = start + href.length;
  }
  if (at < text.length) parts.push({ text: text.slice(at) });
  return parts;
}

/** Spec §4: the unread popup is not shown on an exchange page or a chat page (nor on /support, the support chat itself). */
export function unreadPopupHiddenOn(pathname: string): boolean {
  return /^\/(exchanges|exchange|chat|support)(\/|$)/.test(pathname);
}
