// A `ferry broker --config server.properties` process with Kafka's security settings, for the
// real-client security tests: the listeners and keys are written into a properties file as an
// operator would write them, SCRAM users are added with `ferry users add` (password on standard
// input), and each listener's port is read from the broker's `listener NAME on HOST:PORT` lines
// (every listener but the first binds port 0; the first takes BrokerProcess's free port).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess } from './broker-process.ts';
import { until } from './until.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
/** WAL objects close this soon after their first append, so acks=all answers quickly. */
const UPLOAD_INTERVAL_MS = 5;
/** How long the broker may take to say it reloaded after SIGHUP. */
const RELOAD_TIMEOUT_MS = 10_000;
/** How long the listener lines may trail the "listening on" line. */
const LISTENER_LINES_TIMEOUT_MS = 5_000;

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';

export interface SecureListenerSpec {
  /** The listener's name (listeners=NAME://..., listener.name.<name>.* keys). */
  readonly name: string;
  readonly protocol: SecurityProtocol;
}

export interface SecureBrokerOptions {
  /** For the temporary directory's name. */
  readonly label: string;
  /** The listeners, in order; the first is the one the broker record names. */
  readonly listeners: readonly SecureListenerSpec[];
  /** Further server.properties keys (ssl.*, sasl.*, listener.name.*, authorizer.class.name, ...). */
  readonly properties: Readonly<Record<string, string>>;
  /** SCRAM users (both SHA-256 and SHA-512) added with `ferry users add` before the broker starts. */
  readonly scramUsers?: Readonly<Record<string, string>>;
}

/** One running broker with its listeners' addresses. */
export class SecureBroker {
  readonly process: BrokerProcess;
  readonly directory: string;
  readonly configPath: string;
  readonly #listeners: ReadonlyMap<string, string>;

  private constructor(process: BrokerProcess, directory: string, configPath: string, listeners: ReadonlyMap<string, string>) {
    this.process = process;
    this.directory = directory;
    this.configPath = configPath;
    this.#listeners = listeners;
  }

  /** Writes the config, adds the SCRAM users, starts the broker and reads its listeners' ports. */
  static async start(options: SecureBrokerOptions): Promise<SecureBroker> {
    const directory = mkdtempSync(join(tmpdir(), `ferry-${options.label}-`));
    const data = join(directory, 'data');
    const configPath = join(directory, 'server.properties');
    writeFileSync(configPath, propertiesText(options));
    for (const [user, password] of Object.entries(options.scramUsers ?? {})) addScramUser(configPath, data, user, password);
    const process = new BrokerProcess({ nodeId: 1, data, args: ['--config', configPath, '--upload-interval-ms', String(UPLOAD_INTERVAL_MS)] });
    try {
      await process.start();
      await until(() => options.listeners.every((listener) => listenerAddress(process.output(), listener.name) !== null), "the broker's listener lines", LISTENER_LINES_TIMEOUT_MS);
    } catch (error) {
      await process.kill();
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
    const listeners = new Map(options.listeners.map((listener) => [listener.name, listenerAddress(process.output(), listener.name)!]));
    return new SecureBroker(process, directory, configPath, listeners);
  }

  /** HOST:PORT of a listener. */
  bootstrap(listener: string): string {
    const address = this.#listeners.get(listener);
    if (address === undefined) throw new Error(`no listener ${listener} (${[...this.#listeners.keys()].join(', ')})`);
    return address;
  }

  /** kill -HUP, resolving once the broker says it reloaded (rejecting with its error line). */
  async hangUp(): Promise<void> {
    const pid = this.process.pid;
    if (pid === null) throw new Error('the broker is not running');
    const before = this.process.output().split('\n').length;
    process.kill(pid, 'SIGHUP');
    const reloadLine = () =>
      this.process
        .output()
        .split('\n')
        .slice(before - 1)
        .find((line) => line.includes('SIGHUP'));
    await until(() => reloadLine() !== undefined, "the broker's SIGHUP line", RELOAD_TIMEOUT_MS);
    const line = reloadLine()!;
    if (!line.includes('reloaded')) throw new Error(`the reload failed: ${line}`);
  }

  async stop(): Promise<void> {
    await this.process.terminate();
    rmSync(this.directory, { recursive: true, force: true });
  }
}

/** server.properties: listeners (the first on BrokerProcess's port through --listen, the others on port 0), the protocol map, the rest as given. */
function propertiesText(options: SecureBrokerOptions): string {
  const lines = [
    `listeners=${options.listeners.map((listener) => `${listener.name}://127.0.0.1:0`).join(',')}`,
    `listener.security.protocol.map=${options.listeners.map((listener) => `${listener.name}:${listener.protocol}`).join(',')}`,
    ...Object.entries(options.properties).map(([key, value]) => `${key}=${escapeValue(value)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** A properties value: backslashes doubled (Java's escape), everything else as written. */
function escapeValue(value: string): string {
  return value.replaceAll('\\', '\\\\');
}

/** `printf %s PASSWORD | ferry users add USER --config FILE --data DIR` (both SCRAM mechanisms). */
function addScramUser(configPath: string, data: string, user: string, password: string): void {
  const result = Bun.spawnSync([process.execPath, CLI, 'users', 'add', user, '--config', configPath, '--data', data], { stdin: new TextEncoder().encode(password), stdout: 'pipe', stderr: 'pipe' });
  if (result.exitCode !== 0) throw new Error(`ferry users add ${user} failed: ${result.stderr.toString().trim()}`);
}

/** The broker's lines as their messages: its stdout is JSON lines (a line that is not JSON stays as it is). */
function messagesOf(output: string): string {
  return output
    .split('\n')
    .map((line) => {
      try {
        const parsed = JSON.parse(line) as { msg?: unknown };
        return typeof parsed.msg === 'string' ? parsed.msg : line;
      } catch {
        return line;
      }
    })
    .join('\n');
}

/** The address of listener `name` from the broker's `listener NAME on HOST:PORT: ...` line, or null. */
function listenerAddress(output: string, name: string): string | null {
  const match = new RegExp(`^listener ${name} on ([^\\s]+:\\d+):`, 'm').exec(messagesOf(output));
  return match?.[1] ?? null;
}
