// kcat (librdkafka 2.0.2) as the security suite runs it: `-X` settings for each protocol and
// mechanism, a bounded run, and the reason librdkafka gives when it is refused.
import type { TestCertificates } from '../../../support/certificates.ts';

export const KCAT = Bun.which('kcat');
/** A kcat run is killed after this: every refusal is seen within a few seconds. */
const KCAT_TIMEOUT_MS = 20_000;
/** kcat -L waits this long for metadata (-m, seconds) before giving up. */
export const KCAT_METADATA_TIMEOUT_S = 3;
/** A refused producer's message expires after this (librdkafka message.timeout.ms). */
const REFUSED_MESSAGE_TIMEOUT_MS = 4_000;

export interface KcatResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/**
 * Runs kcat against `bootstrap` with `settings` (-X pairs) and `args`, stopped after `timeoutMs`
 * (a group member refused its group retries until stopped, as librdkafka does).
 */
export async function kcat(bootstrap: string, settings: readonly string[], args: readonly string[], options: { readonly input?: string; readonly timeoutMs?: number } = {}): Promise<KcatResult> {
  if (KCAT === null) throw new Error('kcat is not installed: apt-get install -y kcat');
  const command = [KCAT, '-b', bootstrap, ...settings.flatMap((setting) => ['-X', setting]), ...args];
  const child = Bun.spawn(command, { stdin: options.input === undefined ? 'ignore' : new TextEncoder().encode(options.input), stdout: 'pipe', stderr: 'pipe' });
  const timer = setTimeout(() => child.kill('SIGTERM'), options.timeoutMs ?? KCAT_TIMEOUT_MS);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { stdout, stderr, exitCode };
}

/** security.protocol=ssl trusting the test CA, with a client certificate when `client` is given. */
export function kcatSsl(certificates: TestCertificates, client?: { readonly keyPath: string; readonly certPath: string }): string[] {
  return ['security.protocol=ssl', `ssl.ca.location=${certificates.caPath}`, ...(client === undefined ? [] : [`ssl.certificate.location=${client.certPath}`, `ssl.key.location=${client.keyPath}`])];
}

/** security.protocol=sasl_ssl with a PLAIN or SCRAM mechanism. */
export function kcatSasl(certificates: TestCertificates, mechanism: string, username: string, password: string): string[] {
  return ['security.protocol=sasl_ssl', `ssl.ca.location=${certificates.caPath}`, `sasl.mechanisms=${mechanism}`, `sasl.username=${username}`, `sasl.password=${password}`];
}

/** librdkafka's unsecured OAUTHBEARER tokens (alg none) for `principal`: the only OAUTHBEARER kcat 2.0.2 has without OIDC. */
export function kcatUnsecuredOAuth(certificates: TestCertificates, principal: string): string[] {
  return [
    'security.protocol=sasl_ssl',
    `ssl.ca.location=${certificates.caPath}`,
    'sasl.mechanisms=OAUTHBEARER',
    'enable.sasl.oauthbearer.unsecure.jwt=true',
    `sasl.oauthbearer.config=principal=${principal}`,
  ];
}

/** Produces `lines` with acks=all to partition 0. */
export function kcatProduce(bootstrap: string, settings: readonly string[], topic: string, lines: readonly string[]): Promise<KcatResult> {
  return kcat(bootstrap, [...settings, 'acks=all'], ['-P', '-t', topic, '-p', '0'], { input: `${lines.join('\n')}\n` });
}

/** Reads partition 0 from the beginning to its end, one value a line. */
export async function kcatConsume(bootstrap: string, settings: readonly string[], topic: string): Promise<string[]> {
  const result = await kcat(bootstrap, settings, ['-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%s\\n']);
  if (result.exitCode !== 0) throw new Error(`kcat could not consume ${topic}: ${result.stderr}`);
  return result.stdout.split('\n').filter((line) => line !== '');
}

/** A refused client's attempt to write: one message with acks=all that must never land. */
export function kcatProduceRefused(bootstrap: string, settings: readonly string[], topic: string, value: string): Promise<KcatResult> {
  return kcat(bootstrap, [...settings, 'acks=all', `message.timeout.ms=${REFUSED_MESSAGE_TIMEOUT_MS}`], ['-P', '-t', topic, '-p', '0'], { input: `${value}\n` });
}

/**
 * Why librdkafka gave up, as it says it: the reason of its first FAIL log line (after the broker's
 * name, before "(after N ms in state ...)"), else its first "% ERROR:" line.
 */
export function kcatRefusal(stderr: string): string {
  const lines = stderr.split('\n');
  const fail = lines.find((line) => /\|FAIL\||\|ERROR\|/.test(line));
  if (fail !== undefined) {
    const reason = fail.replace(/^.*?\]: \S+: /, '');
    return reason.replace(/ \(after \d+ms in state [^)]*\)$/, '');
  }
  return lines.find((line) => line.startsWith('% ERROR:'))?.replace('% ERROR: ', '') ?? `no error reported: ${stderr.trim()}`;
}

/** kcat's first "% ERROR:" or "% Delivery failed" line (a consumer or delivery error: authorization), else librdkafka's FAIL reason. */
export function kcatClientError(stderr: string): string {
  const error = stderr.split('\n').find((line) => line.startsWith('% ERROR:') || line.startsWith('% Delivery failed'));
  return error === undefined ? kcatRefusal(stderr) : error.replace(/^% (ERROR: )?/, '');
}
