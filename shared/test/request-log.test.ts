import { describe, expect, it } from 'vitest';
import { childLoggerOnFirstUse, isSaneRequestId, redactUrl } from '../src/request-log.ts';

const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';

describe('request log helpers', () => {
  it('masks 43-character tokens in paths and query values, nothing else', () => {
    expect(token).toHaveLength(43);
    expect(redactUrl(`/api/auth/reset/${token}`)).toBe('/api/auth/reset/[redacted]');
    expect(redactUrl(`/reset-password?token=${token}&x=1`)).toBe('/reset-password?token=[redacted]&x=1');
    expect(redactUrl(`/login?confirm=${token}`)).toBe('/login?confirm=[redacted]');
    expect(redactUrl('/api/verification/file/6a0e7f0c-5d8b-4c1e-9c7e-0d6f2b9b1a11')).toBe('/api/verification/file/6a0e7f0c-5d8b-4c1e-9c7e-0d6f2b9b1a11');
    expect(redactUrl(`/x/${token}z`)).toBe(`/x/${token}z`);
  });

  it('accepts short ids of safe characters only', () => {
    expect(isSaneRequestId('abc-123_x.y:z')).toBe(true);
    for (const bad of ['', 'a b', 'a'.repeat(65), 'a\nb', 'ю', 42, undefined, ['a']]) expect(isSaneRequestId(bad)).toBe(false);
  });
});

describe("a request's logger", () => {
  /** A stand-in for pino's logger: counts the children made and keeps the lines they write. */
  function parentLog() {
    const lines: Array<{ bindings: object; args: unknown[] }> = [];
    let made = 0;
    const log = (bindings: object) => ({
      level: 'info',
      info: (...args: unknown[]) => lines.push({ bindings, args }),
      warn: (...args: unknown[]) => lines.push({ bindings, args }),
      isLevelEnabled: (level: string) => level !== 'debug',
      child: (more: object) => {
        made++;
        return log({ ...bindings, ...more });
      },
    });
    return { root: log({}), lines, made: () => made };
  }

  it('is made on its first line only, with its bindings; a request that writes none makes none', () => {
    const parent = parentLog();
    const quiet = childLoggerOnFirstUse(parent.root, { reqId: 'r1' }, {});
    expect(quiet.level).toBe('info');
    expect(quiet.isLevelEnabled('debug')).toBe(false);
    expect(parent.made()).toBe(0);
    const talking = childLoggerOnFirstUse(parent.root, { reqId: 'r2' }, {});
    talking.warn({ code: 'x' }, 'upstream failed');
    talking.info('again');
    expect(parent.made()).toBe(1);
    expect(parent.lines).toEqual([
      { bindings: { reqId: 'r2' }, args: [{ code: 'x' }, 'upstream failed'] },
      { bindings: { reqId: 'r2' }, args: ['again'] },
    ]);
  });

  it("is made at once when the route sets its own level (the level is the child's)", () => {
    const parent = parentLog();
    childLoggerOnFirstUse(parent.root, { reqId: 'r3' }, { level: 'warn' });
    expect(parent.made()).toBe(1);
  });
});
