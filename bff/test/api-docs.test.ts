import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildBff, startRealCore } from './session-helpers.ts';

type TDocument = { openapi: string; paths: Record<string, Record<string, { tags?: string[] }>>; fv?: string };

describe('the API document and its reader, in front of the real core', () => {
  let core: Awaited<ReturnType<typeof startRealCore>>;
  let bff: Awaited<ReturnType<typeof buildBff>>;
  let document: TDocument;

  beforeAll(async () => {
    core = await startRealCore();
    bff = await buildBff(core.url);
    const res = await bff.app.inject({ url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    document = res.json();
  }, 180_000); // the real core starts on PGlite (migrations and seed)
  afterAll(async () => {
    await bff?.close();
    await core?.close();
  });

  it('serves the core document with the BFF calls added, valid OpenAPI 3.1, without fv', async () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.fv).toBeUndefined();
    expect(document.paths['/api/logger/front']?.post?.tags).toEqual(['Logging']);
    expect(document.paths['/api/lang']?.post?.tags).toEqual(['Client']);
    expect(document.paths['/api/exchange/{src}/{dst}']?.post?.tags).toEqual(['Exchange']);
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it('serves a readable reference at /api/docs/ from its own assets, under a policy that allows only its own inline script', async () => {
    const redirect = await bff.app.inject({ url: '/api/docs' });
    expect(redirect.statusCode).toBe(301);
    expect(redirect.headers.location).toBe('/api/docs/');
    const page = await bff.app.inject({ url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('/api/openapi.json');
    expect(page.body).not.toMatch(/https?:\/\/(?:cdn|fonts)\./);
    // Scalar's promotions (Ask AI, Deploy, MCP) are switched off in the page's configuration.
    expect(page.body).toMatch(/"showDeveloperTools": "never"/);
    expect(page.body).toMatch(/"agent": {\s*"disabled": true\s*}/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("'unsafe-eval'");
    const inline = [...page.body.matchAll(/<script(?![^>]*\ssrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    expect(inline.length).toBeGreaterThan(0);
    for (const script of inline) expect(csp).toContain(`'sha256-${createHash('sha256').update(script).digest('base64')}'`);
    const bundle = await bff.app.inject({ url: '/api/docs/js/scalar.js' });
    expect(bundle.statusCode).toBe(200);
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    // Everything else keeps the strict policy.
    const api = await bff.app.inject({ url: '/api/openapi.json' });
    expect(String(api.headers['content-security-policy'])).toContain("script-src 'self'; style-src 'self'");
  });
});
