import { describe, expect, it } from 'vitest';
import { sanitizeForServing, sanitizeHtmlContent } from '../../src/lib/sanitize.ts';

const ALLOWED: Record<string, string[]> = Object.fromEntries(
  ['p', 'h2', 'h3', 'h4', 'ul', 'ol', 'li', 'strong', 'em', 'b', 'i', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'code', 'pre', 'blockquote', 'br', 'hr']
    .map((tag) => [tag, [] as string[]])
    .concat([
      ['a', ['href', 'rel']],
      ['img', ['src', 'alt']],
    ]),
);

const SAFE_HREF = /^(https?:\/\/|mailto:|\/(?![/\\])|[#?]|[a-z0-9][a-z0-9/_.-]*$)/i;
const SAFE_SRC = /^(https:\/\/|\/(?![/\\]))/i;

/** Every tag of the output is on the allowlist with allowed attributes and safe URLs only. */
function expectSafe(html: string) {
  const attributes: { attr: string; value: string }[] = [];
  for (const [tag] of html.matchAll(/<[^>]*>/g)) {
    const open = /^<\s*\/?\s*([a-zA-Z0-9-]+)/.exec(tag);
    expect(open, `tag-like text ${tag}`).not.toBeNull();
    const name = open![1]!.toLowerCase();
    expect(Object.keys(ALLOWED), `tag <${name}> in ${html}`).toContain(name);
    if (tag.startsWith('</')) continue;
    for (const [, attr, value] of tag.matchAll(/\s([^\s=/>]+)(?:="([^"]*)")?/g)) {
      expect(ALLOWED[name], `attribute ${attr} on <${name}> in ${html}`).toContain(attr!.toLowerCase());
      attributes.push({ attr: attr!.toLowerCase(), value: value ?? '' });
    }
  }
  const unsafe = attributes.filter(({ attr, value }) => (attr === 'href' && !SAFE_HREF.test(value)) || (attr === 'src' && !SAFE_SRC.test(value)));
  expect(unsafe, html).toEqual([]);
  expect(html).not.toMatch(/<[^>]*\son\w+\s*=/i);
  expect(html).not.toMatch(/<[^>]*(javascript|vbscript|data):/i);
  expect(html).not.toMatch(/<[^>]*style\s*=/i);
}

// Known payloads: OWASP XSS filter evasion cheat sheet, PortSwigger's list, mXSS classics.
const PAYLOADS = [
  '<script>alert(1)</script>',
  '<SCRIPT SRC=//evil.example/x.js></SCRIPT>',
  '<scr<script>ipt>alert(1)</script>',
  '<<script>script>alert(1)<</script>/script>',
  '<img src=x onerror=alert(1)>',
  '<img src="x" onerror="alert(1)"//',
  '<IMG SRC="javascript:alert(1);">',
  '<img src="https://cdn.example/a.png" srcset="javascript:alert(1)" onload="alert(1)">',
  '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text x="20" y="20">x</text></a></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<a href="javascript:alert(1)">x</a>',
  '<a href="JaVaScRiPt:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<a href="java\tscript:alert(1)">x</a>',
  '<a href="java&#09;script:alert(1)">x</a>',
  '<a href="jav&#x61;script:alert(1)">x</a>',
  '<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">x</a>',
  '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">x</a>',
  '<a href="vbscript:msgbox(1)">x</a>',
  '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>',
  '<a href="https://ok.example" onmouseover="alert(1)" style="position:fixed;inset:0">x</a>',
  '<a href="//evil.example">x</a>',
  '<a href="/\\evil.example">x</a>',
  '<p style="background:url(javascript:alert(1))">x</p>',
  '<div style="width: expression(alert(1))">x</div>',
  '<style>@import "https://evil.example/x.css"; body{background:url(javascript:alert(1))}</style>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/x.swf">',
  '<body onload=alert(1)>',
  '<details open ontoggle=alert(1)>x</details>',
  '<input autofocus onfocus=alert(1)>',
  '<form action="javascript:alert(1)"><button formaction="javascript:alert(1)">x</button></form>',
  '<base href="javascript:/">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<link rel="stylesheet" href="https://evil.example/x.css">',
  '<template><script>alert(1)</script></template>',
  '<!--<img src=x onerror=alert(1)>-->',
  '<![CDATA[<script>alert(1)</script>]]>',
  '<p id="login" name="forms" class="x" data-x="1">clobber</p>',
  '<table background="javascript:alert(1)"><tr><td background="javascript:alert(1)">x</td></tr></table>',
  '"><script>alert(1)</script>',
  '<img src=`javascript:alert(1)`>',
  '<a href="https://ok.example" target="_blank" rel="opener">x</a>',
];

describe('HTML sanitiser (articles and notification texts)', () => {
  it.each(PAYLOADS)('neutralises %s', (payload) => {
    const clean = sanitizeHtmlContent(payload);
    expectSafe(clean);
    expect(clean).not.toMatch(/<script|<iframe|<svg|<object|<embed|<style|<form|<base|<meta|<link|<input|<template/i);
    // Sanitising is idempotent: the stored text served again is unchanged.
    expect(sanitizeHtmlContent(clean)).toBe(clean);
  });

  it('keeps the allowed markup as it is', () => {
    const html =
      '<h2>Fees</h2><p>Text with <strong>bold</strong>, <em>em</em>, <b>b</b>, <i>i</i> and <code>code</code>.<br />Next line</p>' +
      '<ul><li>one</li></ul><ol><li>two</li></ol><blockquote>quote</blockquote><pre>pre</pre><hr />' +
      '<table><thead><tr><th>Currency</th></tr></thead><tbody><tr><td>BTC</td></tr></tbody></table>' +
      '<h3>h3</h3><h4>h4</h4><p><a href="/article/faq">FAQ</a> <a href="fees">fees</a> <a href="#top">top</a> <a href="mailto:support@obmen.local">mail</a></p>' +
      '<p><img src="/image/logo.svg" alt="Logo" /> <img src="https://cdn.example/x.png" alt="" /></p>';
    expect(sanitizeHtmlContent(html)).toBe(html);
  });

  it('marks external links rel="noopener nofollow" and replaces any rel of the author', () => {
    expect(sanitizeHtmlContent('<a href="https://example.com/x" rel="opener">x</a>')).toBe('<a href="https://example.com/x" rel="noopener nofollow">x</a>');
    expect(sanitizeHtmlContent('<a href="http://example.com/">x</a>')).toBe('<a href="http://example.com/" rel="noopener nofollow">x</a>');
    expect(sanitizeHtmlContent('<a href="/fees" rel="opener">x</a>')).toBe('<a href="/fees">x</a>');
  });

  it('drops links and images whose URL was refused, keeping the link text', () => {
    expect(sanitizeHtmlContent('<p><a href="javascript:alert(1)">click</a></p>')).toBe('<p>click</p>');
    expect(sanitizeHtmlContent('<p><img src="http://plain.example/x.png" alt="x" />ok</p>')).toBe('<p>ok</p>');
    expect(sanitizeHtmlContent('<p><img src="data:image/png;base64,AAAA" />ok</p>')).toBe('<p>ok</p>');
    expect(sanitizeHtmlContent('<p><img src="//evil.example/x.png" />ok</p>')).toBe('<p>ok</p>');
  });

  it('drops disallowed tags, keeping their text, and code-carrying tags with their content', () => {
    expect(sanitizeHtmlContent('<div><span>kept</span></div><h1>title</h1>')).toBe('kepttitle');
    expect(sanitizeHtmlContent('<p>a<script>var secret = 1;</script>b<style>p{}</style>c</p>')).toBe('<p>abc</p>');
  });

  it('escapes text, so markup-looking text stays text', () => {
    expect(sanitizeHtmlContent('<p>1 &lt; 2 &amp; "quotes" &lt;script&gt;</p>')).toBe('<p>1 &lt; 2 &amp; "quotes" &lt;script&gt;</p>');
    expect(sanitizeHtmlContent('a < b > c')).toBe('a &lt; b &gt; c');
  });

  it('serves the same result from its memo', () => {
    const dirty = '<p onclick="x()">memo</p>';
    expect(sanitizeForServing(dirty)).toBe('<p>memo</p>');
    expect(sanitizeForServing(dirty)).toBe('<p>memo</p>');
  });
});
