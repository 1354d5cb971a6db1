import type { TLSOptions } from 'bun';
import { constants, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { FerryError } from '../../errors.ts';
import type { TlsProtocol, TlsSettings } from './tls-settings.ts';

/** PEM blocks in a file: `-----BEGIN <label>-----` ... `-----END <label>-----`. */
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;
const PRIVATE_KEY_LABEL = /PRIVATE KEY$/;
const CERTIFICATE_LABEL = 'CERTIFICATE';
const CRL_LABEL = 'X509 CRL';
/** OpenSSL's switches that turn a TLS version off. */
const DISABLE_PROTOCOL: Readonly<Record<TlsProtocol, number>> = { 'TLSv1.2': constants.SSL_OP_NO_TLSv1_2, 'TLSv1.3': constants.SSL_OP_NO_TLSv1_3 };

/** What a TLS side presents and checks, read and verified: Bun's TLS options and a line for the start log. */
export interface TlsMaterial {
  readonly options: TLSOptions;
  /** The own certificate's subject and expiry, the number of trusted CAs: for the start log (no secrets). */
  readonly summary: string;
  /** The own certificate (null for a client without one). */
  readonly certificate: X509Certificate | null;
}

/**
 * Reads the PEM files (or texts) the settings name and checks them as far as can be before a
 * client connects: the key decrypts with ssl.key.password and belongs to the first certificate,
 * every certificate and CRL parses, a server has a key and a listener asking for client
 * certificates has CAs to verify them with. Each failure is a FerryError(InvalidArgument) in one
 * line naming the setting (a password is never in it). `side` says which end this is.
 */
export async function loadTlsMaterial(settings: TlsSettings, side: 'server' | 'client', where: string): Promise<TlsMaterial> {
  const keystore = await keystoreOf(settings, where);
  if (side === 'server' && keystore === null)
    throw invalid(`${where}: a TLS listener needs ssl.keystore.location (a PEM file with the key and certificate chain) or ssl.keystore.key and ssl.keystore.certificate.chain`);
  const ca = await pemText(settings.truststoreLocation, settings.truststoreCertificates, 'ssl.truststore', where);
  const cas = ca === null ? [] : certificatesIn(ca, `${where}: ssl.truststore`);
  if (side === 'server' && settings.clientAuth !== 'none' && cas.length === 0)
    throw invalid(`${where}: ssl.client.auth=${settings.clientAuth} needs ssl.truststore.location (the CAs that sign client certificates)`);
  const crl = settings.crlLocation === null ? null : await crlText(settings.crlLocation, where);
  const disabled = (Object.keys(DISABLE_PROTOCOL) as TlsProtocol[]).filter((protocol) => !settings.enabledProtocols.includes(protocol));
  const options: TLSOptions = {
    ...(keystore === null ? {} : { key: keystore.key, cert: keystore.chain }),
    ...(ca === null ? {} : { ca }),
    ...(crl === null ? {} : { crl }),
    ...(settings.cipherSuites === null ? {} : { ciphers: settings.cipherSuites }),
    ...(disabled.length === 0 ? {} : { secureOptions: disabled.reduce((bits, protocol) => bits | DISABLE_PROTOCOL[protocol], 0) }),
    ...(side === 'server' ? { requestCert: settings.clientAuth !== 'none', rejectUnauthorized: settings.clientAuth === 'required' } : { rejectUnauthorized: true }),
  };
  const own = keystore === null ? 'no certificate' : `certificate ${keystore.certificate.subject.replaceAll('\n', ',')} valid until ${keystore.certificate.validTo}`;
  const summary = `${own}, ${cas.length} trusted CA certificate(s)${crl === null ? '' : ', a CRL'}, client auth ${settings.clientAuth}`;
  return { options, summary, certificate: keystore?.certificate ?? null };
}

interface Keystore {
  /** The private key, decrypted, as PKCS#8 PEM. */
  readonly key: string;
  /** The certificate chain as PEM, own certificate first. */
  readonly chain: string;
  readonly certificate: X509Certificate;
}

async function keystoreOf(settings: TlsSettings, where: string): Promise<Keystore | null> {
  let keyPem: string | null = settings.keystoreKey;
  let chainPem: string | null = settings.keystoreCertificateChain;
  if (settings.keystoreLocation !== null) {
    if (keyPem !== null || chainPem !== null) throw invalid(`${where}: give the keystore as ssl.keystore.location or as ssl.keystore.key with ssl.keystore.certificate.chain, not both`);
    const text = await readPem(settings.keystoreLocation, 'ssl.keystore.location', where);
    keyPem =
      blocksOf(text)
        .filter((block) => PRIVATE_KEY_LABEL.test(block.label))
        .map((block) => block.pem)
        .join('\n') || null;
    chainPem =
      blocksOf(text)
        .filter((block) => block.label === CERTIFICATE_LABEL)
        .map((block) => block.pem)
        .join('\n') || null;
    if (keyPem === null) throw invalid(`${where}: ssl.keystore.location ${settings.keystoreLocation} holds no PEM private key`);
    if (chainPem === null) throw invalid(`${where}: ssl.keystore.location ${settings.keystoreLocation} holds no PEM certificate`);
  }
  if (keyPem === null && chainPem === null) return null;
  if (keyPem === null || chainPem === null) throw invalid(`${where}: ssl.keystore.key and ssl.keystore.certificate.chain go together`);
  const key = privateKeyOf(keyPem, settings.keyPassword, where);
  const chain = certificatesIn(chainPem, `${where}: the keystore's certificate chain`);
  const certificate = chain[0]!;
  if (!certificate.checkPrivateKey(key)) throw invalid(`${where}: the keystore's private key does not belong to its first certificate (${certificate.subject.replaceAll('\n', ',')})`);
  return { key: key.export({ type: 'pkcs8', format: 'pem' }).toString(), chain: chainPem, certificate };
}

function privateKeyOf(pem: string, password: string | null, where: string) {
  try {
    return createPrivateKey({ key: pem, ...(password === null ? {} : { passphrase: password }) });
  } catch (error) {
    const encrypted = /ENCRYPTED/.test(pem);
    if (encrypted && password === null) throw invalid(`${where}: the keystore's private key is encrypted: set ssl.key.password`);
    if (encrypted) throw invalid(`${where}: the keystore's private key does not decrypt with ssl.key.password`);
    throw invalid(`${where}: the keystore's private key is not a PEM private key (${(error as Error).message})`);
  }
}

function certificatesIn(pem: string, what: string): X509Certificate[] {
  const blocks = blocksOf(pem).filter((block) => block.label === CERTIFICATE_LABEL);
  if (blocks.length === 0) throw invalid(`${what} holds no PEM certificate`);
  return blocks.map((block, index) => {
    try {
      return new X509Certificate(block.pem);
    } catch (error) {
      throw invalid(`${what}: certificate ${index + 1} does not parse (${(error as Error).message})`);
    }
  });
}

async function crlText(path: string, where: string): Promise<string> {
  const text = await readPem(path, 'ferry.ssl.crl.location', where);
  const crls = blocksOf(text).filter((block) => block.label === CRL_LABEL);
  if (crls.length === 0) throw invalid(`${where}: ferry.ssl.crl.location ${path} holds no PEM CRL (-----BEGIN X509 CRL-----)`);
  return crls.map((block) => block.pem).join('\n');
}

async function pemText(location: string | null, inline: string | null, setting: string, where: string): Promise<string | null> {
  if (location !== null && inline !== null) throw invalid(`${where}: give ${setting}.location or ${setting}.certificates, not both`);
  if (location !== null) return readPem(location, `${setting}.location`, where);
  return inline;
}

async function readPem(path: string, setting: string, where: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw invalid(`${where}: ${setting} ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function blocksOf(text: string): { readonly label: string; readonly pem: string }[] {
  return [...text.matchAll(PEM_BLOCK)].map((match) => ({ label: match[1]!, pem: match[0] }));
}

function invalid(message: string): FerryError {
  return new FerryError('InvalidArgument', message);
}
