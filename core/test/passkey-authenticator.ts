import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/*
 * A software authenticator for tests: makes real attestations ("none") and assertions (ES256)
 * the way a platform authenticator with user verification would, so core's checks run on
 * genuine signatures. Options are the JSON core hands to the browser.
 */

type TOptions = { challenge: string; rp?: { id?: string }; rpId?: string; user?: { id: string } };

const b64 = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

function counterBytes(counter: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(counter);
  return out;
}

export class SoftAuthenticator {
  readonly credentialId = randomBytes(32);
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  userHandle: string | null = null;
  /** The signature counter; tests set it back to play a cloned key. */
  counter = 0;

  readonly origin: string;
  readonly rpId: string;

  constructor(origin: string, rpId: string = new URL(origin).hostname) {
    this.origin = origin;
    this.rpId = rpId;
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get id(): string {
    return b64(this.credentialId);
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: this.origin, crossOrigin: false }));
  }

  private coseKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, isoBase64URL.toBuffer(jwk.x!)],
        [-3, isoBase64URL.toBuffer(jwk.y!)],
      ]),
    );
  }

  /** navigator.credentials.create as @simplewebauthn/browser returns it. */
  register(options: TOptions, overrides: { challenge?: string; origin?: string } = {}): string {
    this.userHandle = options.user?.id ?? null;
    const rpIdHash = sha256(options.rp?.id ?? this.rpId);
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      rpIdHash,
      Buffer.from([UP | UV | AT]),
      counterBytes(this.counter),
      Buffer.alloc(16),
      idLength,
      this.credentialId,
      Buffer.from(this.coseKey()),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, string>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, string>()],
        ['authData', authData],
      ]),
    );
    const clientData = overrides.origin
      ? Buffer.from(
          JSON.stringify({ type: 'webauthn.create', challenge: overrides.challenge ?? options.challenge, origin: overrides.origin, crossOrigin: false }),
        )
      : this.clientData('webauthn.create', overrides.challenge ?? options.challenge);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: { clientDataJSON: b64(clientData), attestationObject: b64(attestationObject), transports: ['internal'] },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    });
  }

  /** navigator.credentials.get as @simplewebauthn/browser returns it; the counter moves on. */
  assert(options: TOptions, overrides: { challenge?: string } = {}): string {
    this.counter += 1;
    const authData = Buffer.concat([sha256(options.rpId ?? this.rpId), Buffer.from([UP | UV]), counterBytes(this.counter)]);
    const clientData = this.clientData('webauthn.get', overrides.challenge ?? options.challenge);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), this.privateKey);
    return JSON.stringify({
      id: this.id,
      rawId: this.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64(clientData),
        authenticatorData: b64(authData),
        signature: b64(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      authenticatorAttachment: 'platform',
      clientExtensionResults: {},
    });
  }
}

type TInject = (url: string, options: { token?: string; payload?: object }) => Promise<{ statusCode: number; json: () => { options: TOptions }; body: string }>;

/** Adds a passkey to the signed-in user through the API (options, then the attestation); returns the authenticator. */
export async function enrolSoftPasskey(
  send: TInject,
  token: string,
  extra: Record<string, string> = {},
  origin = 'http://localhost:3000',
): Promise<SoftAuthenticator> {
  const key = new SoftAuthenticator(origin);
  const options = await send('/api/security/passkeys/options', { token, payload: {} });
  if (options.statusCode !== 200) throw new Error(`passkey options: ${options.statusCode} ${options.body}`);
  const added = await send('/api/security/passkeys', { token, payload: { name: 'Test key', credential: key.register(options.json().options), ...extra } });
  if (added.statusCode !== 200) throw new Error(`passkey add: ${added.statusCode} ${added.body}`);
  return key;
}

/** An assertion of `key` over a fresh second-factor challenge of the signed-in user. */
export async function softSecondFactor(send: TInject, token: string, key: SoftAuthenticator): Promise<string> {
  const options = await send('/api/security/second_factor/options', { token, payload: {} });
  if (options.statusCode !== 200) throw new Error(`second factor options: ${options.statusCode} ${options.body}`);
  return key.assert(options.json().options);
}
