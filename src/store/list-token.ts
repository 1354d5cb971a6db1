import { invalidArgument } from './validate.ts';

/**
 * The continuation token of a listing page, for backends that page through keys in sorted order
 * (memory, file): the last key handed out, with the prefix it belongs to so a token cannot be
 * replayed against another listing. Opaque to callers; order is still not part of the contract.
 */
export function encodeListToken(prefix: string, lastKey: string): string {
  return Buffer.from(JSON.stringify([prefix, lastKey]), 'utf8').toString('base64url');
}

/** The last key of the previous page; InvalidArgument if the token is not one of ours for `prefix`. */
export function decodeListToken(prefix: string, token: string): string {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || typeof decoded[1] !== 'string') throw invalidArgument(undefined, `list: malformed continuation token ${JSON.stringify(token)}`);
  if (decoded[0] !== prefix) throw invalidArgument(undefined, `list: the continuation token belongs to prefix ${JSON.stringify(decoded[0])}, not ${JSON.stringify(prefix)}`);
  return decoded[1];
}

/** One page of `sortedKeys` (ascending) after `afterKey`, and the token of the next page if any. */
export function pageOf(prefix: string, sortedKeys: readonly string[], afterKey: string | undefined, maxKeys: number): { keys: string[]; nextToken?: string } {
  let first = 0;
  if (afterKey !== undefined) {
    let high = sortedKeys.length;
    while (first < high) {
      const middle = (first + high) >>> 1;
      if (sortedKeys[middle]! <= afterKey) first = middle + 1;
      else high = middle;
    }
  }
  const keys = sortedKeys.slice(first, first + maxKeys);
  if (first + maxKeys >= sortedKeys.length) return { keys };
  return { keys, nextToken: encodeListToken(prefix, keys[keys.length - 1]!) };
}
