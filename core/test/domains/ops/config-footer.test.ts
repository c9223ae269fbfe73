import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers.ts';
import { call } from '../../auth-helpers.ts';
import { asOperator, operatorWith, stepUpOperator, type TTestOperator, useOpsApp } from '../../ops-helpers.ts';
import { jpegHtmlPolyglot, jpegWithGps, multipart, pdf, png, type TPart } from '../../storage/upload-fixtures.ts';
import { verifyAuditChain } from '../../../src/domains/audit/service.ts';

type TImage = { name: string; ext: string; src: string; url?: string; order: number; uploaded: boolean };

describe.each(ENGINES)('footer logos from the configuration screen on %s', (engine) => {
  const ctx = useOpsApp(engine);
  const clock = ctx.clock;
  const fresh = async (roles: string[]) => {
    const op = await operatorWith(ctx, clock, roles);
    await stepUpOperator(ctx.app, clock, op);
    return op;
  };
  const upload = (op: TTestOperator, parts: TPart[], locale: 'ru' | 'en' = 'en') => {
    const { payload, headers } = multipart(parts);
    return ctx.app.inject({
      method: 'POST',
      url: '/api/ops/config/footer',
      payload,
      headers: { ...headers, ...asOperator(op.token).headers, 'x-obmen-locale': locale },
    });
  };
  const imageOf = (images: TImage[], name: string) => images.find((image) => image.name === name);
  const count = async () => (await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM footer_images'))[0]!.n;

  it('an uploaded logo is sniffed, re-encoded without metadata, served to everyone from the core with long cache headers, replaced and removed, each audited', async () => {
    const [admin, support] = [await fresh(['admin']), await fresh(['support'])];
    const listed = (await call(ctx.app, '/api/ops/config/footer', asOperator(admin.token))).json().images as TImage[];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((image) => !image.uploaded && image.src === `/image/footer_logos/${image.name}.${image.ext}`)).toBe(true);
    const before = await count();

    expect(
      (
        await upload(support, [
          { name: 'name', value: 'bank-north' },
          { name: 'file', filename: 'n.png', content: await png() },
        ])
      ).json().code,
    ).toBe('ops_forbidden');
    const polyglot = await upload(
      admin,
      [
        { name: 'name', value: 'bank-north' },
        { name: 'file', filename: 'n.jpg', content: await jpegHtmlPolyglot() },
      ],
      'ru',
    );
    expect({ status: polyglot.statusCode, code: polyglot.json().code }).toEqual({ status: 415, code: 'file_refused' });
    expect(polyglot.json().fields.file).toMatch(/[а-я]/i);
    const document = await upload(admin, [
      { name: 'name', value: 'bank-north' },
      { name: 'file', filename: 'n.pdf', content: pdf() },
    ]);
    expect(document.json()).toMatchObject({ code: 'file_refused', fields: { file: expect.any(String) } });
    expect((await upload(admin, [{ name: 'name', value: 'bank-north' }])).json().fields).toHaveProperty('file');
    expect(
      (
        await upload(admin, [
          { name: 'name', value: 'Bank North!' },
          { name: 'file', filename: 'n.png', content: await png() },
        ])
      ).json().fields,
    ).toHaveProperty('name');
    expect(await count()).toBe(before);

    const first = await upload(admin, [
      { name: 'name', value: 'bank-north' },
      { name: 'url', value: 'https://north.example' },
      { name: 'order', value: '5' },
      { name: 'file', filename: 'north.jpg', content: await jpegWithGps() },
    ]);
    expect(first.statusCode, first.body).toBe(200);
    const uploaded = imageOf(first.json().images, 'bank-north')!;
    expect(uploaded).toMatchObject({ ext: 'jpg', url: 'https://north.example', order: 5, uploaded: true });
    expect(uploaded.src).toMatch(/^\/api\/site\/logos\/[0-9a-f-]{36}\.jpg$/);
    const served = await call(ctx.app, uploaded.src);
    expect(served.statusCode).toBe(200);
    expect(served.headers).toMatchObject({
      'content-type': 'image/jpeg',
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    });
    const meta = await sharp(served.rawPayload).metadata();
    expect({ format: meta.format, exif: meta.exif }).toEqual({ format: 'jpeg', exif: undefined });
    // The footer of every page names it.
    const menu = (await call(ctx.app, '/api/content/menu')).json().footer_images as TImage[];
    expect(imageOf(menu, 'bank-north')).toEqual({ name: 'bank-north', ext: 'jpg', src: uploaded.src, url: 'https://north.example' });

    const second = await upload(admin, [
      { name: 'name', value: 'bank-north' },
      { name: 'file', filename: 'north.png', content: await png() },
    ]);
    expect(second.statusCode, second.body).toBe(200);
    const replaced = imageOf(second.json().images, 'bank-north')!;
    expect(replaced).toMatchObject({ ext: 'png', order: 5, uploaded: true });
    expect(replaced.src).not.toBe(uploaded.src);
    expect((await call(ctx.app, replaced.src)).headers['content-type']).toBe('image/png');
    expect((await call(ctx.app, uploaded.src)).statusCode).toBe(404);
    expect((await call(ctx.app, '/api/site/logos/not-a-logo.exe')).statusCode).toBe(404);

    const remove = (name: string) => call(ctx.app, '/api/ops/config/footer/remove', { payload: { name }, ...asOperator(admin.token) });
    const removed = await remove('bank-north');
    expect(removed.statusCode, removed.body).toBe(200);
    expect(imageOf(removed.json().images, 'bank-north')).toBeUndefined();
    expect((await call(ctx.app, replaced.src)).statusCode).toBe(404);
    expect((await remove('bank-north')).statusCode).toBe(404);
    expect(await count()).toBe(before);

    const trail = await ctx.db.query<{ action: string; before: { file_id: string } | null; after: { file_id: string } | null }>(
      "SELECT action, before, after FROM operator_audit WHERE subject = 'footer_image:bank-north' AND outcome = 'done' ORDER BY id",
    );
    const idOf = (image: TImage) => image.src.split('/').pop();
    expect(trail.map((row) => [row.action, row.before?.file_id ?? null, row.after?.file_id ?? null])).toEqual([
      ['config.footer_logo', null, idOf(uploaded)],
      ['config.footer_logo', idOf(uploaded), idOf(replaced)],
      ['config.footer_remove', idOf(replaced), null],
    ]);
    expect(await verifyAuditChain(ctx.db)).toMatchObject({ intact: true });
  });
});
