/**
 * A URL fit to print: user info and secret-looking query parameters replaced, also inside a
 * parameter whose value is itself a URL (an S3 store URL's `endpoint=`). Store URLs are quoted in
 * one-line errors and in the start line, which end up in journals; a credential put in one by
 * mistake must not.
 */

export const REDACTED = '[redacted]';
/** Query parameters that could carry a secret. */
const SECRET_PARAMETER = /password|secret|token|credential|signature|key/i;
const URL_SHAPE = /^[a-z][a-z0-9+.-]*:\/\//i;
/** A URL inside a URL inside a URL is followed this deep, no deeper. */
const NESTING_MAX = 3;

/** `text` with its secrets redacted when it is a URL; any other text as it is. */
export function urlWithoutSecrets(text: string, depth = 0): string {
  if (!URL_SHAPE.test(text) || depth > NESTING_MAX) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return text;
  }
  let changed = false;
  if (url.username !== '' || url.password !== '') {
    url.username = REDACTED;
    url.password = '';
    changed = true;
  }
  for (const [name, value] of [...url.searchParams.entries()]) {
    const safe = SECRET_PARAMETER.test(name) ? REDACTED : urlWithoutSecrets(value, depth + 1);
    if (safe === value) continue;
    url.searchParams.set(name, safe);
    changed = true;
  }
  return changed ? url.toString() : text;
}
