/**
 * ETags as S3 forms them: a content hash for a single put (S3 uses MD5; Ferry uses XXH64, seed
 * 0, 14.7 GB/s natively), and for a multipart object a hash of the parts' hashes with the part
 * count after a dash. Equal bytes give equal ETags, so an ETag says nothing about when it was
 * written: compare-and-swap on an unchanged body succeeds, as on S3.
 */
const HEX_DIGITS = 16;

export function contentEtag(body: Uint8Array): string {
  return Bun.hash.xxHash64(body).toString(16).padStart(HEX_DIGITS, '0');
}

/**
 * The ETag of an object written in `chunkCount` chunks (a sequential write, the file store): the
 * XXH64 of each chunk seeded with that of the ones before, then S3's dash and count. Like a
 * multipart ETag it depends on where the chunks were cut, and it needs no second pass or list.
 */
export function chainedEtag(chainedHash: bigint, chunkCount: number): string {
  return `${chainedHash.toString(16).padStart(HEX_DIGITS, '0')}-${chunkCount}`;
}

export function multipartEtag(partEtags: readonly string[]): string {
  return `${contentEtag(new TextEncoder().encode(partEtags.join('')))}-${partEtags.length}`;
}
