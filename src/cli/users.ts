import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { ControlStore } from '../control/control-store.ts';
import { SCRAM_SALT_BYTES_DEFAULT, saltedPasswordOf } from '../security/scram/credential.ts';
import { SCRAM_ITERATIONS_DEFAULT, SCRAM_MECHANISMS, type ScramMechanism, scramMechanismNamed, scramMechanismOfType } from '../security/scram/mechanism.ts';
import { ScramCredentialStore } from '../security/scram/store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { openStore } from '../store/url.ts';
import { CliError, parseCommandArgs } from './args.ts';
import { resolveBrokerConfig } from './broker-config.ts';
import { DEFAULT_STORE_DIRECTORY } from './broker-settings.ts';

const USAGE = `usage: ferry users <add|remove|list> [NAME] [options]

Manages the SCRAM users a broker's SASL listeners accept (SCRAM-SHA-256, SCRAM-SHA-512), kept
salted and hashed in the control records (the cluster store, or a single broker's WAL store), as
Kafka's kafka-configs.sh --alter --add-config 'SCRAM-SHA-256=[password=...]' and the
AlterUserScramCredentials API do. Every broker sharing the store takes a change within a second.
PLAIN users are not here: they are the user_NAME entries of the listener's JAAS config.

  ferry users add NAME      set NAME's password (read from standard input, first line; never a flag)
  ferry users remove NAME   remove NAME's credentials
  ferry users list          list users with their mechanisms and iterations (never a secret)

options:
  --config FILE          the broker's config file: it says where the control records are
                         (also --cluster-store, --wal-store, --data as for ferry broker)
  --cluster-store URL    the cluster's control store
  --wal-store URL        a single broker's WAL store (default file:<data>/objects)
  --data DIR             a single broker's log directory (default ./data)
  --create-store         create a file: store's directory that does not exist yet (as for ferry broker)
  --mechanism NAME       SCRAM-SHA-256 or SCRAM-SHA-512 (add: default both; remove: default every one)
  --iterations N         PBKDF2 iterations for add (${SCRAM_MECHANISMS[0]!.iterationsMin}-${SCRAM_MECHANISMS[0]!.iterationsMax}, default ${SCRAM_ITERATIONS_DEFAULT})
  -h, --help             this text`;

/** The longest password read from standard input (Kafka bounds none; this bounds the read). */
const PASSWORD_CHARS_MAX = 1024;

export async function runUsers(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(
    args,
    {
      config: { type: 'string' },
      'cluster-store': { type: 'string' },
      'wal-store': { type: 'string' },
      data: { type: 'string' },
      'create-store': { type: 'boolean' },
      mechanism: { type: 'string' },
      iterations: { type: 'string' },
    },
    USAGE,
  );
  if (parsed === null) return;
  const [action, name, ...extra] = parsed.positionals;
  if (action === undefined) throw new CliError("say what to do: add NAME, remove NAME or list ('ferry users --help')");
  if (extra.length > 0) throw new CliError(`unexpected argument '${extra[0]}'; 'ferry users --help' shows the usage`);
  if (action !== 'list' && (name === undefined || name === '')) throw new CliError(`${action} needs a user name: ferry users ${action} NAME`);
  const mechanisms = mechanismsOf(parsed.values.mechanism);
  const store = await controlStoreOf(parsed.values);
  try {
    const users = new ScramCredentialStore(new ControlStore(store, ''));
    if (action === 'list') return await list(users);
    if (action === 'add') return await add(users, name!, mechanisms, iterationsOf(parsed.values.iterations));
    if (action === 'remove') return await remove(users, name!, parsed.values.mechanism === undefined ? null : mechanisms);
    throw new CliError(`unknown action '${action}'; say add, remove or list`);
  } finally {
    await store.close();
  }
}

async function list(users: ScramCredentialStore): Promise<void> {
  const described = await users.describe(null);
  if (described.length === 0) console.log('no SCRAM users');
  for (const user of described) {
    const infos = user.credentialInfos.map((info) => `${scramMechanismOfType(info.mechanism)?.name ?? `type ${info.mechanism}`} (${info.iterations} iterations)`);
    console.log(`${user.user}: ${infos.length === 0 ? 'no credentials' : infos.join(', ')}`);
  }
}

async function add(users: ScramCredentialStore, name: string, mechanisms: readonly ScramMechanism[], iterations: number): Promise<void> {
  const password = await passwordFromStdin();
  const upsertions = mechanisms.map((mechanism) => {
    const salt = randomBytes(SCRAM_SALT_BYTES_DEFAULT);
    return { name, mechanism: mechanism.type, iterations, salt, saltedPassword: saltedPasswordOf(mechanism, password, salt, iterations) };
  });
  // One mechanism per request: Kafka refuses a request that names a user twice.
  for (const upsertion of upsertions) for (const result of await users.alter([], [upsertion])) failOn(result, `add ${name}`);
  console.log(`${name}: ${mechanisms.map((mechanism) => mechanism.name).join(', ')} set (${iterations} iterations)`);
}

async function remove(users: ScramCredentialStore, name: string, mechanisms: readonly ScramMechanism[] | null): Promise<void> {
  const [described] = await users.describe([name]);
  if (described === undefined || described.errorCode !== 0) throw new CliError(`user ${name} has no SCRAM credentials; 'ferry users list' shows who has`, 1);
  const held = described.credentialInfos.map((info) => info.mechanism);
  const removing = mechanisms === null ? held : mechanisms.map((mechanism) => mechanism.type).filter((type) => held.includes(type));
  if (removing.length === 0) throw new CliError(`user ${name} has no ${mechanisms!.map((mechanism) => mechanism.name).join(' or ')} credential`, 1);
  for (const mechanism of removing) for (const result of await users.alter([{ name, mechanism }], [])) failOn(result, `remove ${name}`);
  console.log(`${name}: ${removing.map((type) => scramMechanismOfType(type)?.name).join(', ')} removed`);
}

function failOn(result: { errorCode: number; errorMessage: string | null }, what: string): void {
  if (result.errorCode !== 0) throw new CliError(`${what}: ${result.errorMessage ?? `error ${result.errorCode}`}`, 1);
}

function mechanismsOf(value: string | boolean | undefined): readonly ScramMechanism[] {
  if (value === undefined) return SCRAM_MECHANISMS;
  const mechanism = scramMechanismNamed(String(value).toUpperCase());
  if (mechanism === null) throw new CliError(`--mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got '${value}'`);
  return [mechanism];
}

function iterationsOf(value: string | boolean | undefined): number {
  if (value === undefined) return SCRAM_ITERATIONS_DEFAULT;
  const iterations = Number(value);
  const { iterationsMin, iterationsMax } = SCRAM_MECHANISMS[0]!;
  if (!Number.isSafeInteger(iterations) || iterations < iterationsMin || iterations > iterationsMax)
    throw new CliError(`--iterations must be an integer in [${iterationsMin}, ${iterationsMax}], got '${value}'`);
  return iterations;
}

/** Where the broker keeps its control records: its cluster store, else its WAL store, as `ferry broker` would open them. */
async function controlStoreOf(values: { readonly [name: string]: string | boolean | undefined }): Promise<ObjectStore> {
  const flags = { config: values.config, 'cluster-store': values['cluster-store'], 'wal-store': values['wal-store'], data: values.data, 'create-store': values['create-store'] };
  const { config } = resolveBrokerConfig({ flags, env: process.env });
  const url = config.cluster?.store ?? config.walStore ?? `file:${resolve(config.data, DEFAULT_STORE_DIRECTORY)}`;
  return openStore(url);
}

/** The first line of standard input: where a password comes from (a flag would show in `ps` and shell history). */
async function passwordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('password: ');
  let text = '';
  for await (const chunk of process.stdin) {
    text += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    if (text.includes('\n') || text.length > PASSWORD_CHARS_MAX) break;
  }
  const password = text.split(/\r?\n/)[0] ?? '';
  if (password === '') throw new CliError('no password on standard input: pipe it in (printf %s "$PASSWORD" | ferry users add NAME ...)');
  if (password.length > PASSWORD_CHARS_MAX) throw new CliError(`the password is longer than ${PASSWORD_CHARS_MAX} characters; choose a shorter one`);
  return password;
}
