const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = Buffer.from(',');
const NOTHING = Buffer.alloc(0);

function isJsonSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * Adds `"fv":"…"` as the first key of a JSON object body without parsing it: a proxied
 * answer costs one copy, not a parse and a stringify. Anything but an object passes as is.
 */
export function injectFrontendVersion(body: Buffer, fvMember: Buffer): Buffer {
  let open = 0;
  while (isJsonSpace(body[open])) open++;
  if (body[open] !== OPEN_BRACE) return body;
  let next = open + 1;
  while (isJsonSpace(body[next])) next++;
  const separator = body[next] === CLOSE_BRACE ? NOTHING : COMMA;
  return Buffer.concat([body.subarray(0, open + 1), fvMember, separator, body.subarray(open + 1)]);
}

export function frontendVersionMember(fv: string): Buffer {
  return Buffer.from(`"fv":${JSON.stringify(fv)}`);
}
