import { describe, expect, it } from 'vitest';
import { frontendVersionMember, injectFrontendVersion } from '../src/envelope.ts';

const member = frontendVersionMember('v1');
const inject = (text: string) => injectFrontendVersion(Buffer.from(text), member).toString('utf8');

describe('injectFrontendVersion', () => {
  it('adds fv as the first key of an object', () => {
    expect(inject('{"a":1}')).toBe('{"fv":"v1","a":1}');
  });

  it('adds fv to an empty object without a dangling comma', () => {
    expect(inject('{}')).toBe('{"fv":"v1"}');
    expect(JSON.parse(inject('{ \n\t }'))).toEqual({ fv: 'v1' });
  });

  it('handles leading whitespace and pretty-printed bodies', () => {
    expect(JSON.parse(inject('\n  \r\t{"a":1}'))).toEqual({ fv: 'v1', a: 1 });
    expect(JSON.parse(inject('{\n  "a": [1, {"b": {}}]\n}\n'))).toEqual({ fv: 'v1', a: [1, { b: {} }] });
  });

  it('wins over an fv the core might have sent itself (JSON.parse keeps the last key, so it is added first: the core may override)', () => {
    // Documented behaviour: fv is prepended; an upstream fv (which the core must not send) would take precedence.
    expect(JSON.parse(inject('{"fv":"old"}'))).toEqual({ fv: 'old' });
  });

  it.each(['[1,2]', '"text"', 'null', '42', 'true', '', '   ', 'not json {'])('leaves %j unchanged', (text) => {
    const body = Buffer.from(text);
    expect(injectFrontendVersion(body, member)).toBe(body);
  });

  it('escapes the version as a JSON string', () => {
    const odd = frontendVersionMember('a"b\\c\n');
    expect(JSON.parse(injectFrontendVersion(Buffer.from('{}'), odd).toString())).toEqual({ fv: 'a"b\\c\n' });
  });

  it('keeps multibyte UTF-8 content intact', () => {
    expect(JSON.parse(inject('{"t":"Обмен ₿ 💱"}'))).toEqual({ fv: 'v1', t: 'Обмен ₿ 💱' });
  });
});
