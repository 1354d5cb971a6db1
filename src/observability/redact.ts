/**
 * A configuration made fit for a log line: secrets replaced, functions left out, bulky text cut.
 * The start line logs the whole checked config this way, so a setting added later is logged
 * without anyone remembering to, and a secret added later is hidden if its name says what it is.
 */

import { REDACTED, urlWithoutSecrets } from '../util/url-secrets.ts';

export { REDACTED };
/** Longer text (a PEM certificate chain inline) is cut to this in a log line. */
export const REDACTED_TEXT_CHARS_MAX = 200;
/** Nesting followed at most: a config is a few levels deep; anything deeper is not a config. */
const DEPTH_MAX = 8;

/**
 * Names of settings whose values are secrets: passwords (ssl.key.password, a SASL client's),
 * secret keys and tokens (S3 credentials, session tokens), JAAS configs (they hold passwords),
 * inline private keys (ssl.keystore.key as keystoreKey) and SCRAM salted passwords.
 */
const SECRET_NAME = /password|secret|token|credential|jaas|keystorekey|privatekey|^key$/i;

/** `value` with every secret replaced by REDACTED (see SECRET_NAME), Maps as objects, functions left out. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value !== 'object' || value === null) return typeof value === 'function' ? undefined : value;
  if (depth >= DEPTH_MAX) return '[too deep]';
  if (value instanceof Uint8Array) return `[${value.length} bytes]`;
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item, depth + 1));
  const entries = value instanceof Map ? [...value.entries()].map(([key, item]) => [String(key), item] as const) : Object.entries(value);
  const out: Record<string, unknown> = {};
  for (const [key, item] of entries) {
    if (typeof item === 'function') continue;
    out[key] = SECRET_NAME.test(key) && item !== null && item !== undefined ? REDACTED : redactSecrets(item, depth + 1);
  }
  return out;
}

/** A URL's user info and secret-looking query parameters redacted (src/util/url-secrets.ts); long text cut. */
function redactText(text: string): string {
  const url = urlWithoutSecrets(text);
  return url.length > REDACTED_TEXT_CHARS_MAX ? `${url.slice(0, REDACTED_TEXT_CHARS_MAX)}...[${url.length} chars]` : url;
}
