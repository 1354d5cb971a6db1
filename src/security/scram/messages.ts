import { assert } from '../../util/assert.ts';

/**
 * SCRAM's four messages (RFC 5802 section 7), parsed strictly and formatted as Kafka's
 * ScramMessages does. A parser takes the text of one token and throws ScramFormatError, whose
 * message names what is wrong (for logs: never sent to a client, never holding a proof).
 *
 *   client-first = gs2-header [ "m=" ... "," ] "n=" saslname ",r=" c-nonce [ "," extensions ]
 *   server-first = "r=" c-nonce s-nonce ",s=" salt ",i=" iteration-count [ "," extensions ]
 *   client-final = "c=" base64(gs2-header) ",r=" nonce [ "," extensions ] ",p=" proof
 *   server-final = "v=" base64(ServerSignature) | "e=" server-error-value
 */

/** The longest SCRAM token read, in bytes: two user names, a nonce and extensions fit well inside. */
export const SCRAM_MESSAGE_BYTES_MAX = 16 * 1024;
/** The longest user name (authcid or authzid) as sent, escapes included. */
export const SCRAM_SASLNAME_CHARS_MAX = 3 * 1024;
/** The longest nonce from either side; Kafka's are ~26 characters, librdkafka's 32. */
export const SCRAM_NONCE_CHARS_MAX = 256;
/** At most this many extensions (Kafka knows one: tokenauth). */
export const SCRAM_EXTENSIONS_MAX = 16;
/** The longest iteration count written in a server-first message, in digits. */
const ITERATIONS_DIGITS_MAX = 10;

export class ScramFormatError extends Error {
  override name = 'ScramFormatError';
}

export interface ClientFirstMessage {
  /** `n,` plus the authzid part plus `,`: the client-final's `c=` must be its base64. */
  readonly gs2Header: string;
  /** The authzid, unescaped; empty when the client named none. */
  readonly authorizationId: string;
  readonly username: string;
  readonly nonce: string;
  /** Extensions after the nonce, by name (Kafka's `tokenauth=true` for delegation tokens). */
  readonly extensions: ReadonlyMap<string, string>;
  /** The message without the gs2 header, as sent: the first part of AuthMessage. */
  readonly bare: string;
}

export interface ServerFirstMessage {
  readonly nonce: string;
  readonly salt: Uint8Array;
  readonly iterations: number;
  readonly text: string;
}

export interface ClientFinalMessage {
  readonly channelBinding: string;
  readonly nonce: string;
  readonly proof: Uint8Array;
  /** Up to the proof, as sent: the last part of AuthMessage. */
  readonly withoutProof: string;
}

export type ServerFinalMessage = { readonly signature: Uint8Array; readonly error: null } | { readonly signature: null; readonly error: string };

/** RFC 5802 5.1: ',' and '=' in a user name travel as `=2C` and `=3D`. */
export function saslNameOf(username: string): string {
  return username.replaceAll('=', '=3D').replaceAll(',', '=2C');
}

/** The user name a saslname stands for; ScramFormatError for an `=` that starts no escape. */
export function usernameOf(saslName: string): string {
  if (/=(?!2C|3D)/.test(saslName)) throw new ScramFormatError('a user name holds "=" outside the escapes =2C and =3D');
  return saslName.replaceAll('=2C', ',').replaceAll('=3D', '=');
}

export function parseClientFirst(text: string): ClientFirstMessage {
  const parts = text.split(',');
  if (parts.length < 4) throw new ScramFormatError('client-first message: too few attributes');
  if (parts[0] !== 'n')
    throw new ScramFormatError(
      parts[0] === 'y' || parts[0]!.startsWith('p=') ? 'client-first message: channel binding is not supported, only the gs2 header "n"' : 'client-first message: the gs2 header must start with "n,"',
    );
  const authzidPart = parts[1]!;
  if (authzidPart !== '' && !authzidPart.startsWith('a=')) throw new ScramFormatError('client-first message: the gs2 header\'s second part must be empty or an authzid "a="');
  const authorizationId = authzidPart === '' ? '' : usernameOf(saslName(authzidPart.slice(2), 'authzid'));
  if (parts[2]!.startsWith('m=')) throw new ScramFormatError('client-first message: a mandatory extension "m=" is not supported');
  const username = usernameOf(saslName(attribute(parts[2]!, 'n', 'client-first message'), 'user name'));
  const nonce = printableNonce(attribute(parts[3]!, 'r', 'client-first message'));
  const extensions = parseExtensions(parts.slice(4), 'client-first message');
  const gs2Header = `n,${authzidPart},`;
  return { gs2Header, authorizationId, username, nonce, extensions, bare: text.slice(gs2Header.length) };
}

export function formatClientFirst(username: string, nonce: string): string {
  return `n,,n=${saslNameOf(username)},r=${nonce}`;
}

export function formatServerFirst(nonce: string, salt: Uint8Array, iterations: number): string {
  return `r=${nonce},s=${Buffer.from(salt).toString('base64')},i=${iterations}`;
}

export function parseServerFirst(text: string): ServerFirstMessage {
  const parts = text.split(',');
  if (parts.length < 3) throw new ScramFormatError('server-first message: too few attributes');
  if (parts[0]!.startsWith('m=')) throw new ScramFormatError('server-first message: a mandatory extension "m=" is not supported');
  const nonce = printableNonce(attribute(parts[0]!, 'r', 'server-first message'), 2 * SCRAM_NONCE_CHARS_MAX);
  const salt = base64Bytes(attribute(parts[1]!, 's', 'server-first message'), 'salt');
  const digits = attribute(parts[2]!, 'i', 'server-first message');
  if (!/^[0-9]+$/.test(digits) || digits.length > ITERATIONS_DIGITS_MAX) throw new ScramFormatError('server-first message: the iteration count is not a number');
  const iterations = Number(digits);
  if (iterations <= 0) throw new ScramFormatError('server-first message: the iteration count must be positive');
  parseExtensions(parts.slice(3), 'server-first message');
  return { nonce, salt, iterations, text };
}

export function formatClientFinalWithoutProof(gs2Header: string, nonce: string): string {
  return `c=${Buffer.from(gs2Header, 'utf8').toString('base64')},r=${nonce}`;
}

export function parseClientFinal(text: string): ClientFinalMessage {
  const proofAt = text.lastIndexOf(',p=');
  if (proofAt < 0) throw new ScramFormatError('client-final message: no proof "p="');
  const withoutProof = text.slice(0, proofAt);
  const parts = withoutProof.split(',');
  if (parts.length < 2) throw new ScramFormatError('client-final message: too few attributes');
  const channelBinding = attribute(parts[0]!, 'c', 'client-final message');
  base64Bytes(channelBinding, 'channel binding');
  const nonce = printableNonce(attribute(parts[1]!, 'r', 'client-final message'), 2 * SCRAM_NONCE_CHARS_MAX);
  parseExtensions(parts.slice(2), 'client-final message');
  const proof = base64Bytes(text.slice(proofAt + 3), 'proof');
  return { channelBinding, nonce, proof, withoutProof };
}

export function formatServerFinal(signature: Uint8Array): string {
  return `v=${Buffer.from(signature).toString('base64')}`;
}

export function parseServerFinal(text: string): ServerFinalMessage {
  const parts = text.split(',');
  const first = parts[0]!;
  parseExtensions(parts.slice(1), 'server-final message');
  if (first.startsWith('e=')) {
    const error = first.slice(2);
    if (error === '' || error.includes('=')) throw new ScramFormatError('server-final message: a malformed error "e="');
    return { signature: null, error };
  }
  return { signature: base64Bytes(attribute(first, 'v', 'server-final message'), 'server signature'), error: null };
}

/** The value of `name=value`; ScramFormatError if the part is another attribute. */
function attribute(part: string, name: string, message: string): string {
  if (!part.startsWith(`${name}=`)) throw new ScramFormatError(`${message}: expected the attribute "${name}=" in its place`);
  return part.slice(name.length + 1);
}

/** A saslname as sent: 1 to SCRAM_SASLNAME_CHARS_MAX characters, no NUL (',' cannot occur: it splits). */
function saslName(value: string, what: string): string {
  if (value === '') throw new ScramFormatError(`the ${what} is empty`);
  if (value.length > SCRAM_SASLNAME_CHARS_MAX) throw new ScramFormatError(`the ${what} is longer than ${SCRAM_SASLNAME_CHARS_MAX} characters`);
  if (value.includes('\0')) throw new ScramFormatError(`the ${what} holds NUL`);
  return value;
}

/** RFC 5802's printable: %x21-2B / %x2D-7E, one or more. */
function printableNonce(value: string, charsMax = SCRAM_NONCE_CHARS_MAX): string {
  if (value === '') throw new ScramFormatError('the nonce is empty');
  if (value.length > charsMax) throw new ScramFormatError(`the nonce is longer than ${charsMax} characters`);
  if (!/^[\x21-\x2b\x2d-\x7e]+$/.test(value)) throw new ScramFormatError('the nonce holds a character outside printable ASCII');
  return value;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Strict base64 (Buffer.from would skip what is not base64 and take the rest). */
function base64Bytes(value: string, what: string): Uint8Array {
  if (!BASE64.test(value)) throw new ScramFormatError(`the ${what} is not base64`);
  return new Uint8Array(Buffer.from(value, 'base64'));
}

/** `name=value` extensions: ALPHA names (Kafka allows words), values without NUL; the last of a name wins. */
function parseExtensions(parts: readonly string[], message: string): Map<string, string> {
  if (parts.length > SCRAM_EXTENSIONS_MAX) throw new ScramFormatError(`${message}: more than ${SCRAM_EXTENSIONS_MAX} extensions`);
  const extensions = new Map<string, string>();
  for (const part of parts) {
    const match = /^([A-Za-z]+)=([^\0]+)$/.exec(part);
    if (match === null) throw new ScramFormatError(`${message}: a malformed extension`);
    extensions.set(match[1]!, match[2]!);
  }
  return extensions;
}

assert(2 * SCRAM_SASLNAME_CHARS_MAX + SCRAM_NONCE_CHARS_MAX < SCRAM_MESSAGE_BYTES_MAX, 'a client-first message with the longest names and nonce fits in a token');
