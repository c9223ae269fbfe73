import { describe, expect, it } from 'vitest';
import { isSaneRequestId, redactUrl } from '../src/request-log.ts';

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
