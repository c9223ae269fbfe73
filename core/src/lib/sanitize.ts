import sanitizeHtml from 'sanitize-html';

/*
 * The one HTML sanitiser of the core: articles and notification texts pass through it when
 * they are saved and again when they are served (a row written by plain SQL or an old version
 * is made safe on the way out too). An allowlist, on sanitize-html (htmlparser2, no DOM):
 *
 *   tags        p h2 h3 h4 ul ol li a strong em b i table thead tbody tr th td code pre
 *               blockquote br hr img; anything else is dropped (its text kept), and script,
 *               style, iframe, svg, math, template, noscript, textarea… are dropped with
 *               everything inside them
 *   attributes  a: href; img: src, alt. Nothing else: no on* handlers, no style, no class or
 *               id (no DOM clobbering), no target
 *   a href      http:, https:, mailto: or relative ("/fees", "fees", "#top", "?q"); an
 *               external link (http: or https:) gets rel="noopener nofollow"; "//host" is refused
 *   img src     https: or a site path ("/image/x.png"); never http:, data:, javascript: or //host
 *   entities    decoded before the scheme check, so "jav&#x61;script:" and tab/newline tricks
 *               are refused too (sanitize-html's naughtyHref)
 */

const ALLOWED_TAGS = [
  'p',
  'h2',
  'h3',
  'h4',
  'ul',
  'ol',
  'li',
  'a',
  'strong',
  'em',
  'b',
  'i',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'code',
  'pre',
  'blockquote',
  'br',
  'hr',
  'img',
];

/** Dropped together with their content (the default list plus everything that can hold code). */
const NON_TEXT_TAGS = [
  'script',
  'style',
  'textarea',
  'option',
  'xmp',
  'noscript',
  'noembed',
  'noframes',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'template',
  'svg',
  'math',
  'title',
  'head',
  'select',
  'plaintext',
];

const EXTERNAL = /^\s*https?:\/\//i;
/** "//host" and "/\\host": another host with the page's scheme; refused for links too. */
const PROTOCOL_RELATIVE = /^\s*[/\\]{2}/;
/** Images: https, or a path of this site ("/image/x.png"); sanitize-html checks the scheme again. */
const IMAGE_SRC = /^\s*(?:https:\/\/|\/(?![/\\]))/i;

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: { a: ['href', 'rel'], img: ['src', 'alt'] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  allowedStyles: {},
  parseStyleAttributes: false,
  disallowedTagsMode: 'discard',
  nonTextTags: NON_TEXT_TAGS,
  enforceHtmlBoundary: false,
  nestingLimit: 32,
  // A link or image left without its URL (refused above) is no link or image: the link's text stays.
  exclusiveFilter: (frame) => {
    if (frame.tag === 'img') return !frame.attribs.src;
    if (frame.tag === 'a' && !frame.attribs.href) return 'excludeTag';
    return false;
  },
  transformTags: {
    // rel is ours alone: whatever the author wrote is replaced.
    a: (tagName, attribs) => {
      const href = attribs.href;
      const out: Record<string, string> = {};
      if (href !== undefined && !PROTOCOL_RELATIVE.test(href)) {
        out.href = href;
        if (EXTERNAL.test(href)) out.rel = 'noopener nofollow';
      }
      return { tagName, attribs: out };
    },
    img: (tagName, attribs) => {
      const out: Record<string, string> = {};
      if (attribs.src !== undefined && IMAGE_SRC.test(attribs.src)) out.src = attribs.src;
      if (attribs.alt !== undefined) out.alt = attribs.alt;
      return { tagName, attribs: out };
    },
  },
};

/** Safe HTML for innerHTML / set:html. Idempotent: sanitising the output again changes nothing. */
export function sanitizeHtmlContent(dirty: string): string {
  return sanitizeHtml(dirty, OPTIONS).trim();
}

/**
 * The same, remembered for the texts served most often (articles on every page view when the
 * BFF's cache is cold): a few hundred entries, keyed by the stored text itself.
 */
const MEMO_MAX = 256;
const memo = new Map<string, string>();

export function sanitizeForServing(stored: string): string {
  const hit = memo.get(stored);
  if (hit !== undefined) return hit;
  const clean = sanitizeHtmlContent(stored);
  if (memo.size >= MEMO_MAX) memo.delete(memo.keys().next().value!);
  memo.set(stored, clean);
  return clean;
}
