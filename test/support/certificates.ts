/**
 * Certificates made for a test with Debian's openssl: a CA, a server certificate for 127.0.0.1
 * and localhost, client certificates (one per name), a certificate the CA revoked with its CRL,
 * and a second, untrusted CA's client certificate. Everything is PEM, under `dir`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCertificates {
  readonly dir: string;
  /** The CA certificate (the truststore of servers and clients). */
  readonly caPath: string;
  /** The server's key and certificate in one PEM file (ssl.keystore.location). */
  readonly serverPemPath: string;
  readonly serverKeyPath: string;
  readonly serverCertPath: string;
  /** A client's key and certificate files, by the name in its CN. */
  client(name: string): { readonly keyPath: string; readonly certPath: string; readonly pemPath: string };
  /** The CRL listing the revoked client (ferry.ssl.crl.location). */
  readonly crlPath: string;
  /** The CN of the revoked client. */
  readonly revokedName: string;
  /** A client certificate signed by another CA. */
  readonly untrusted: { readonly keyPath: string; readonly certPath: string };
}

/** The O and OU every client certificate carries: its principal is `CN=<name>,OU=test,O=Ferry` in RFC 2253 order. */
export const CLIENT_SUBJECT_SUFFIX = '/OU=test/O=Ferry';
/** The principal Kafka's default rules give a client certificate of `name`. */
export const clientPrincipalName = (name: string): string => `O=Ferry,OU=test,CN=${name}`;

/** Makes a CA, a server certificate and a client certificate for each name (plus `revoked`, revoked in the CRL). */
export function makeCertificates(dir: string, clients: readonly string[]): TestCertificates {
  mkdirSync(dir, { recursive: true });
  const path = (name: string) => join(dir, name);
  const run = (...args: string[]) => openssl(dir, args);
  const keyOf = (name: string) => run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', path(`${name}.key`));
  keyOf('ca');
  run('req', '-x509', '-new', '-key', path('ca.key'), '-out', path('ca.pem'), '-days', '2', '-subj', '/CN=ferry-test-ca');
  writeFileSync(path('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(path('client.ext'), 'extendedKeyUsage=clientAuth\n');
  const sign = (name: string, subject: string, ext: string, ca = 'ca') => {
    keyOf(name);
    run('req', '-new', '-key', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', subject);
    run('x509', '-req', '-in', path(`${name}.csr`), '-CA', path(`${ca}.pem`), '-CAkey', path(`${ca}.key`), '-CAcreateserial', '-out', path(`${name}.pem`), '-days', '2', '-extfile', path(ext));
    writeFileSync(path(`${name}.bundle.pem`), `${readFileSync(path(`${name}.key`), 'utf8')}${readFileSync(path(`${name}.pem`), 'utf8')}`);
  };
  sign('server', '/CN=localhost', 'server.ext');
  const revokedName = 'revoked';
  for (const name of [...clients, revokedName]) sign(name, `/CN=${name}${CLIENT_SUBJECT_SUFFIX}`, 'client.ext');
  revoke(dir, path(`${revokedName}.pem`));
  keyOf('other-ca');
  run('req', '-x509', '-new', '-key', path('other-ca.key'), '-out', path('other-ca.pem'), '-days', '2', '-subj', '/CN=other-ca');
  sign('untrusted', `/CN=untrusted${CLIENT_SUBJECT_SUFFIX}`, 'client.ext', 'other-ca');
  return {
    dir,
    caPath: path('ca.pem'),
    serverPemPath: path('server.bundle.pem'),
    serverKeyPath: path('server.key'),
    serverCertPath: path('server.pem'),
    client: (name) => ({ keyPath: path(`${name}.key`), certPath: path(`${name}.pem`), pemPath: path(`${name}.bundle.pem`) }),
    crlPath: path('crl.pem'),
    revokedName,
    untrusted: { keyPath: path('untrusted.key'), certPath: path('untrusted.pem') },
  };
}

/** Revokes a certificate with the test CA and writes the CRL (openssl ca needs its small database). */
function revoke(dir: string, certPath: string): void {
  const db = join(dir, 'ca-db');
  mkdirSync(db, { recursive: true });
  writeFileSync(join(db, 'index.txt'), '');
  writeFileSync(join(db, 'crlnumber'), '01\n');
  writeFileSync(join(dir, 'ca.cnf'), `[ ca ]\ndefault_ca = test\n[ test ]\ndatabase = ${join(db, 'index.txt')}\ncrlnumber = ${join(db, 'crlnumber')}\ndefault_md = sha256\ndefault_crl_days = 2\n`);
  const ca = ['-config', join(dir, 'ca.cnf'), '-keyfile', join(dir, 'ca.key'), '-cert', join(dir, 'ca.pem')];
  openssl(dir, ['ca', ...ca, '-revoke', certPath]);
  openssl(dir, ['ca', ...ca, '-gencrl', '-out', join(dir, 'crl.pem')]);
}

function openssl(cwd: string, args: string[]): void {
  const result = Bun.spawnSync(['openssl', ...args], { cwd, stderr: 'pipe', stdout: 'pipe' });
  if (result.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr.toString().trim()}`);
}
