// SCRAM messages: saslname escapes and the strict parsers.
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { parseClientFinal, parseClientFirst, parseServerFinal, parseServerFirst, saslNameOf, ScramFormatError, usernameOf } from '../../../src/security/scram/messages.ts';

test('saslname: , and = escaped as =2C and =3D, and back, for any name', () => {
  expect(saslNameOf('a,b=c')).toBe('a=2Cb=3Dc');
  expect(usernameOf('=3D2C')).toBe('=2C');
  fc.assert(fc.property(fc.string(), (name) => usernameOf(saslNameOf(name)) === name));
  for (const bad of ['a=b', '=', '=2c', '=3', 'x=4E']) expect(() => usernameOf(bad)).toThrow(ScramFormatError);
});

test('client-first: gs2 header, authzid, bare message and extensions as sent', () => {
  const first = parseClientFirst('n,a=bob,n=bob,r=abc,tokenauth=true');
  expect(first).toEqual({ gs2Header: 'n,a=bob,', authorizationId: 'bob', username: 'bob', nonce: 'abc', extensions: new Map([['tokenauth', 'true']]), bare: 'n=bob,r=abc,tokenauth=true' });
  expect(parseClientFirst('n,,n=a=2Cb,r=x').username).toBe('a,b');
  for (const bad of ['n,,n=bob,r=abc,', 'n,,n=bob,r=abc,1=2', 'n,,r=abc,n=bob', 'n,,n=bob,r=a\u00e9', `n,,n=bob,r=${'x'.repeat(257)}`, 'n,,n=b\0b,r=x']) {
    expect(() => parseClientFirst(bad)).toThrow(ScramFormatError);
  }
});

test('server-first, client-final, server-final', () => {
  expect(parseServerFirst('r=abcdef,s=QSXCR+Q6sek8bf92,i=4096').iterations).toBe(4096);
  expect(() => parseServerFirst('r=abc,s=QSXCR+Q6sek8bf9,i=4096')).toThrow('the salt is not base64');
  expect(() => parseServerFirst('r=abc,s=,i=0')).toThrow(ScramFormatError);
  const final = parseClientFinal('c=biws,r=abc,ext=1,p=AAAA');
  expect(final.withoutProof).toBe('c=biws,r=abc,ext=1');
  expect([...final.proof]).toEqual([0, 0, 0]);
  expect(() => parseClientFinal('c=biws,r=abc')).toThrow(ScramFormatError);
  expect(() => parseClientFinal('c=biws,r=abc,p=A')).toThrow(ScramFormatError);
  expect(parseServerFinal('e=invalid-proof')).toEqual({ signature: null, error: 'invalid-proof' });
  expect(parseServerFinal('v=AAAA').signature).toEqual(new Uint8Array(3));
  expect(() => parseServerFinal('x=AAAA')).toThrow(ScramFormatError);
});
