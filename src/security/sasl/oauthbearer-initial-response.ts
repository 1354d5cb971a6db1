/**
 * The OAUTHBEARER client's first message (RFC 7628 §3.1), read as Kafka's
 * OAuthBearerClientInitialResponse reads it:
 *
 *   gs2-header  = "n," [ "a=" saslname ] ","
 *   message     = gs2-header %x01 *( key "=" value %x01 ) %x01
 *   saslname    = 1*( %x01-7F except "=" and "," / "=2C" / "=3D" )
 *   key         = 1*ALPHA
 *   value       = 1*( %x21-7E / SP / HTAB / CR / LF )
 *   auth value  = scheme 1*SP b64token        scheme = 1*( ALPHA / DIGIT / "_" ), "bearer" in any case
 *   b64token    = 1*( ALPHA / DIGIT / "-" / "_" / "~" / "+" / "/" / "." ) *"="
 *
 * `auth` is required and reserved; every other pair is a SASL extension. A key given twice keeps its
 * last value (Kafka reads the pairs into a map). The authzid is kept as sent (Kafka does not undo
 * the =2C / =3D escapes either). Every byte must be ASCII: Kafka decodes the message as UTF-8 and
 * its patterns accept no character above 0x7F.
 */

/**
 * The longest first message read. A JWT from a real identity provider is 1-8 KiB (group claims make
 * the long ones); 64 KiB leaves room for those and costs at most that much per connection while it
 * authenticates.
 */
export const INITIAL_RESPONSE_SIZE_MAX_BYTES = 64 * 1024;
/** Most SASL extensions in one message: each costs a map entry; clients send a handful at most. */
export const EXTENSION_COUNT_MAX = 64;

/** Kafka's SaslException texts: the reason a first message was refused (logged, never sent: see oauthbearer.ts). */
export const INVALID_FIRST_MESSAGE = 'Invalid OAUTHBEARER client first message';
export const AUTH_NOT_SPECIFIED = "Invalid OAUTHBEARER client first message: 'auth' not specified";
export const INVALID_AUTH_FORMAT = "Invalid OAUTHBEARER client first message: invalid 'auth' format";
export const INVALID_SCHEME_PREFIX = 'Invalid scheme in OAUTHBEARER client first message: ';

/** The key of the bearer token; no extension may take it. */
export const AUTH_KEY = 'auth';
export const SEPARATOR = '\x01';

export interface ClientInitialResponse {
  /** The token after `Bearer `. */
  readonly tokenValue: string;
  /** The authzid of the GS2 header; empty when the client named none. */
  readonly authorizationId: string;
  /** The SASL extensions (every pair but `auth`), in the order first seen. */
  readonly extensions: ReadonlyMap<string, string>;
}

/** A first message that is not one: the message is Kafka's SaslException text. */
export class InvalidInitialResponseError extends Error {
  override name = 'InvalidInitialResponseError';
}

const KEY = /^[A-Za-z]+$/;
const VALUE = /^[\x21-\x7E \t\r\n]+$/;
/** Any ASCII but NUL, `,` and `=`, or the escapes =2C and =3D. */
const SASLNAME = /^(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+$/;
const AUTH = /^(\w+) +([-_~+/.a-zA-Z0-9]+=*)$/;

export function parseClientInitialResponse(bytes: Uint8Array): ClientInitialResponse {
  if (bytes.length > INITIAL_RESPONSE_SIZE_MAX_BYTES) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  for (const byte of bytes) if (byte > 0x7f) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  const text = new TextDecoder().decode(bytes);
  const { authorizationId, rest } = readGs2Header(text);
  const pairs = readPairs(rest);
  const auth = pairs.get(AUTH_KEY);
  if (auth === undefined) throw new InvalidInitialResponseError(AUTH_NOT_SPECIFIED);
  pairs.delete(AUTH_KEY);
  const match = AUTH.exec(auth);
  if (match === null) throw new InvalidInitialResponseError(INVALID_AUTH_FORMAT);
  const [, scheme = '', tokenValue = ''] = match;
  if (scheme.toLowerCase() !== 'bearer') throw new InvalidInitialResponseError(INVALID_SCHEME_PREFIX + scheme);
  return { tokenValue, authorizationId, extensions: pairs };
}

/** `n,,` or `n,a=<saslname>,`, then the %x01 that opens the pairs. */
function readGs2Header(text: string): { authorizationId: string; rest: string } {
  if (!text.startsWith('n,')) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  let position = 2;
  let authorizationId = '';
  if (text.startsWith('a=', position)) {
    const end = text.indexOf(',', position + 2);
    if (end < 0) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
    authorizationId = text.slice(position + 2, end);
    if (!SASLNAME.test(authorizationId)) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
    position = end;
  }
  if (!text.startsWith(`,${SEPARATOR}`, position)) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  return { authorizationId, rest: text.slice(position + 2) };
}

/** `*( key "=" value %x01 ) %x01`: the pairs, each closed by %x01, then one more %x01. */
function readPairs(rest: string): Map<string, string> {
  if (!rest.endsWith(SEPARATOR)) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  const body = rest.slice(0, -1);
  const pairs = new Map<string, string>();
  if (body === '') return pairs;
  if (!body.endsWith(SEPARATOR)) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  const elements = body.slice(0, -1).split(SEPARATOR);
  if (elements.length > EXTENSION_COUNT_MAX + 1) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
  for (const element of elements) {
    const equals = element.indexOf('=');
    const key = element.slice(0, equals);
    const value = element.slice(equals + 1);
    if (equals < 0 || !KEY.test(key) || !VALUE.test(value)) throw new InvalidInitialResponseError(INVALID_FIRST_MESSAGE);
    pairs.set(key, value);
  }
  return pairs;
}
