import { FerryError } from '../../errors.ts';

/**
 * JAAS configuration as Kafka reads it: the `sasl.jaas.config` property (Kafka's JaasConfig, one
 * login module) and a JAAS file's sections (`KafkaServer { ... };`, `KafkaClient`, as Java's
 * ConfigFile reads them). Tokens follow java.io.StreamTokenizer as each sets it up: quoted values
 * with backslash escapes (\n \t \r \b \f \a \v, octal \0-\377, any other character itself), `//`,
 * `/* *\/` and a lone `/` start comments. Two differences from Java, both refusals: a quoted value
 * that a line end or the input's end cuts off is an error (Java would take it cut), and so is an
 * unterminated `/*` comment. `${...}` in a file's values is kept as written (Java expands system
 * properties). Errors are one line (FerryError InvalidConfig) and never quote a value.
 */

export type JaasControlFlag = 'required' | 'requisite' | 'sufficient' | 'optional';

export interface JaasLoginModule {
  /** The login module's class name: `org.apache.kafka.common.security.plain.PlainLoginModule`. */
  readonly loginModule: string;
  readonly controlFlag: JaasControlFlag;
  /** The options in order; a name given twice keeps its last value (Java's HashMap). */
  readonly options: ReadonlyMap<string, string>;
}

export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
export const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';
/** PlainLoginModule's `user_NAME="password"`: the users a broker accepts with PLAIN. */
export const JAAS_USER_PREFIX = 'user_';
/** The longest JAAS text read (a property value or a file): a file of thousands of users fits. */
export const JAAS_TEXT_CHARS_MAX = 4 * 1024 * 1024;
/** How much of a name (module, flag, option) an error quotes. */
const NAME_SHOWN_CHARS_MAX = 80;

/**
 * The `sasl.jaas.config` value: exactly one login module, as Kafka's JaasContext requires of the
 * property (`<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;`).
 */
export function parseSaslJaasConfig(value: string): JaasLoginModule {
  const modules = parseJaasConfigModules(value);
  if (modules.length !== 1) throw jaasError('sasl.jaas.config', `JAAS config property contains ${modules.length} login modules, should be 1 module`);
  return modules[0]!;
}

/** The login modules of a `sasl.jaas.config`-style value (Kafka's JaasConfig), at least one. */
export function parseJaasConfigModules(value: string): JaasLoginModule[] {
  const tokens = new JaasTokenizer(value, 'config');
  const modules: JaasLoginModule[] = [];
  for (let token = tokens.next(); token.kind !== 'eof'; token = tokens.next()) modules.push(configEntry(tokens, token));
  if (modules.length === 0) throw jaasError('sasl.jaas.config', 'Login module not specified in JAAS config');
  return modules;
}

function configEntry(tokens: JaasTokenizer, first: Token): JaasLoginModule {
  const where = (token: Token): string => `sasl.jaas.config line ${token.line}`;
  if (!isName(first) || first.text === '') throw jaasError(where(first), `Login module not specified in JAAS config (found ${describe(first)})`);
  const loginModule = first.text;
  const flagToken = tokens.next();
  if (flagToken.kind === 'eof') throw jaasError(where(flagToken), 'Login module control flag not specified in JAAS config');
  const controlFlag = controlFlagOf(flagToken, where(flagToken), (shown) => `Invalid login module control flag ${shown} in JAAS config`);
  const options = new Map<string, string>();
  let token = tokens.next();
  for (; token.kind !== 'eof' && !isChar(token, ';'); token = tokens.next()) {
    const key = token;
    const equals = tokens.next();
    if (!isName(key) || !isChar(equals, '='))
      throw jaasError(where(key), `Value not specified for option ${options.size + 1} of login module ${show(loginModule)} in JAAS config: expected name=value`);
    const value = tokens.next();
    if (!isName(value)) throw jaasError(where(value), `Value not specified for key ${show(key.text)} in JAAS config`);
    options.set(key.text, value.text);
  }
  if (!isChar(token, ';')) throw jaasError(where(token), `JAAS config entry not terminated by semi-colon (login module ${show(loginModule)})`);
  return { loginModule, controlFlag, options };
}

/** A JAAS file's sections by name (`KafkaServer`, `KafkaClient`, `sasl_ssl.KafkaServer`), as Java's ConfigFile reads them. */
export function parseJaasFile(text: string): Map<string, JaasLoginModule[]> {
  const tokens = new JaasTokenizer(text, 'file');
  const sections = new Map<string, JaasLoginModule[]>();
  for (let token = tokens.next(); token.kind !== 'eof'; token = tokens.next()) {
    const name = fileName(token, 'application name');
    expectChar(tokens.next(), '{');
    const modules: JaasLoginModule[] = [];
    for (token = tokens.next(); !isChar(token, '}'); token = tokens.next()) modules.push(fileEntry(tokens, token));
    expectChar(tokens.next(), ';');
    if (sections.has(name)) throw jaasError(`JAAS file line ${token.line}`, `Can not specify multiple entries for ${show(name)}`);
    sections.set(name, modules);
  }
  return sections;
}

function fileEntry(tokens: JaasTokenizer, first: Token): JaasLoginModule {
  const loginModule = fileName(first, 'module class name');
  const flagToken = tokens.next();
  fileName(flagToken, 'controlFlag');
  const controlFlag = controlFlagOf(flagToken, `JAAS file line ${flagToken.line}`, (shown) => `Invalid control flag, ${shown}`);
  const options = new Map<string, string>();
  let token = tokens.next();
  for (; !isChar(token, ';'); token = tokens.next()) {
    const key = fileName(token, 'option key');
    expectChar(tokens.next(), '=');
    options.set(key, fileName(tokens.next(), 'option value', key));
  }
  return { loginModule, controlFlag, options };
}

/** A word or a double-quoted string where a file wants one; `key` names the option a value belongs to. */
function fileName(token: Token, expected: string, key?: string): string {
  if (token.kind === 'word' || (token.kind === 'quoted' && token.quote === '"')) return token.text;
  const of = key === undefined ? '' : ` of option ${show(key)}`;
  if (token.kind === 'quoted') throw jaasError(`JAAS file line ${token.line}`, `expected [${expected}]${of}: single quotes are not taken in a JAAS file, use double quotes`);
  if (token.kind === 'number') throw jaasError(`JAAS file line ${token.line}`, `expected [${expected}]${of}, found a number: quote it`);
  throw jaasError(`JAAS file line ${token.line}`, `expected [${expected}]${of}, found ${describe(token)}`);
}

function expectChar(token: Token, char: string): void {
  if (!isChar(token, char)) throw jaasError(`JAAS file line ${token.line}`, `expected [${char}], found ${describe(token)}`);
}

function controlFlagOf(token: Token, where: string, invalid: (shown: string) => string): JaasControlFlag {
  const flag = isName(token) ? token.text.toLowerCase() : '';
  if (flag === 'required' || flag === 'requisite' || flag === 'sufficient' || flag === 'optional') return flag;
  throw jaasError(where, invalid(token.kind === 'word' ? show(token.text) : describe(token)));
}

/**
 * The PLAIN users of a broker's JAAS modules: each `user_NAME` option of a PlainLoginModule (the
 * first module holding a name wins, as Kafka's JaasContext.configEntryOption looks them up).
 */
export function plainUsersOf(modules: readonly JaasLoginModule[]): Map<string, string> {
  const users = new Map<string, string>();
  for (const module of modules) {
    if (module.loginModule !== PLAIN_LOGIN_MODULE) continue;
    for (const [key, password] of module.options) {
      const user = key.startsWith(JAAS_USER_PREFIX) ? key.slice(JAAS_USER_PREFIX.length) : '';
      if (user !== '' && !users.has(user)) users.set(user, password);
    }
  }
  return users;
}

export interface JaasCredentials {
  readonly username: string;
  readonly password: string;
}

/**
 * The broker's own `username` and `password` in its `loginModule` (PLAIN's or SCRAM's): what it
 * logs in to other brokers with. Null when the module is absent or names no username; InvalidConfig
 * when it names one of the two only.
 */
export function ownCredentialsOf(modules: readonly JaasLoginModule[], loginModule: string): JaasCredentials | null {
  const module = modules.find((candidate) => candidate.loginModule === loginModule);
  const username = module?.options.get('username');
  const password = module?.options.get('password');
  if (username === undefined && password === undefined) return null;
  if (username === undefined || password === undefined)
    throw new FerryError('InvalidConfig', `JAAS login module ${show(loginModule)} has a ${username === undefined ? 'password but no username' : 'username but no password'}`);
  return { username, password };
}

type Token =
  | { readonly kind: 'word'; readonly text: string; readonly line: number }
  | { readonly kind: 'quoted'; readonly text: string; readonly quote: string; readonly line: number }
  | { readonly kind: 'number'; readonly line: number }
  | { readonly kind: 'char'; readonly char: string; readonly line: number }
  | { readonly kind: 'eof'; readonly line: number };

function isName(token: Token): token is Extract<Token, { kind: 'word' | 'quoted' }> {
  return token.kind === 'word' || token.kind === 'quoted';
}

function isChar(token: Token, char: string): boolean {
  return token.kind === 'char' && token.char === char;
}

/** A token in an error: its kind and, for punctuation, the character; never a word or a value. */
function describe(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'the end of the input';
    case 'char':
      return JSON.stringify(token.char);
    case 'number':
      return 'a number';
    case 'quoted':
      return 'a quoted string';
    case 'word':
      return 'a word';
  }
}

function show(name: string): string {
  return `'${name.length > NAME_SHOWN_CHARS_MAX ? `${name.slice(0, NAME_SHOWN_CHARS_MAX)}…` : name}'`;
}

function jaasError(where: string, message: string): FerryError {
  return new FerryError('InvalidConfig', `${where}: ${message}`);
}

/**
 * java.io.StreamTokenizer as Kafka's JaasConfig ('config': every character from '!' up, and from
 * U+00A0 up, is part of a word except ; = " ' /) or Java's ConfigFile ('file': words of letters,
 * digits, . - $ _ * and U+00A0 up, starting with a letter or $ _ *; a digit, '.' or '-' with a
 * digit starts a number) sets it up. Line ends are whitespace.
 */
class JaasTokenizer {
  readonly #text: string;
  readonly #mode: 'config' | 'file';
  #at = 0;
  #line = 1;

  constructor(text: string, mode: 'config' | 'file') {
    if (text.length > JAAS_TEXT_CHARS_MAX) throw jaasError(mode === 'config' ? 'sasl.jaas.config' : 'JAAS file', `longer than ${JAAS_TEXT_CHARS_MAX} characters`);
    this.#text = text;
    this.#mode = mode;
  }

  next(): Token {
    this.#skipBlanks();
    const line = this.#line;
    const code = this.#text.charCodeAt(this.#at);
    if (Number.isNaN(code)) return { kind: 'eof', line };
    const char = this.#text[this.#at]!;
    if (char === '"' || char === "'") return this.#quoted(char, line);
    if (this.#mode === 'file' && this.#startsNumber()) {
      this.#at++;
      while (/[0-9.]/.test(this.#text[this.#at] ?? '')) this.#at++;
      return { kind: 'number', line };
    }
    if (this.#startsWord(code)) {
      const start = this.#at;
      while (this.#at < this.#text.length && this.#continuesWord(this.#text.charCodeAt(this.#at))) this.#at++;
      return { kind: 'word', text: this.#text.slice(start, this.#at), line };
    }
    this.#at++;
    return { kind: 'char', char, line };
  }

  /** Whitespace (every code up to ' ') and comments. */
  #skipBlanks(): void {
    const text = this.#text;
    while (this.#at < text.length) {
      const code = text.charCodeAt(this.#at);
      if (code <= 32) {
        if (code === 10 || (code === 13 && text[this.#at + 1] !== '\n')) this.#line++;
        this.#at++;
      } else if (text[this.#at] === '/' && text[this.#at + 1] === '*') {
        const end = text.indexOf('*/', this.#at + 2);
        if (end < 0) throw jaasError(`${this.#mode === 'config' ? 'sasl.jaas.config' : 'JAAS file'} line ${this.#line}`, 'a /* comment is never closed');
        this.#line += lineEndsIn(text.slice(this.#at, end));
        this.#at = end + 2;
      } else if (text[this.#at] === '/') {
        // `//`, and a lone '/' too (StreamTokenizer's comment character): to the end of the line
        while (this.#at < text.length && text[this.#at] !== '\n' && text[this.#at] !== '\r') this.#at++;
      } else {
        return;
      }
    }
  }

  #startsNumber(): boolean {
    const char = this.#text[this.#at]!;
    if (char === '-') return /[0-9.]/.test(this.#text[this.#at + 1] ?? '');
    return /[0-9.]/.test(char);
  }

  #startsWord(code: number): boolean {
    if (this.#mode === 'config') return this.#continuesWord(code);
    return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 36 || code === 95 || code === 42 || code >= 160;
  }

  #continuesWord(code: number): boolean {
    if (this.#mode === 'config') return (code >= 33 && code <= 128 && code !== 59 && code !== 61 && code !== 34 && code !== 39 && code !== 47) || code >= 160;
    return this.#startsWord(code) || (code >= 48 && code <= 57) || code === 46 || code === 45;
  }

  /** A quoted string from its opening quote: escapes as StreamTokenizer reads them. */
  #quoted(quote: string, line: number): Token {
    const text = this.#text;
    const where = `${this.#mode === 'config' ? 'sasl.jaas.config' : 'JAAS file'} line ${line}`;
    let value = '';
    this.#at++;
    for (;;) {
      const char = text[this.#at];
      if (char === undefined || char === '\n' || char === '\r') throw jaasError(where, 'a quoted string is not closed on its line');
      this.#at++;
      if (char === quote) return { kind: 'quoted', text: value, quote, line };
      if (char !== '\\') {
        value += char;
        continue;
      }
      const escaped = text[this.#at];
      if (escaped === undefined) throw jaasError(where, 'a quoted string ends in a backslash');
      this.#at++;
      if (escaped >= '0' && escaped <= '7') {
        let code = Number(escaped);
        const digits = escaped <= '3' ? 2 : 1; // \377 at most, as Java: a first digit above 3 takes one more
        for (let i = 0; i < digits && /[0-7]/.test(text[this.#at] ?? ''); i++) code = code * 8 + Number(text[this.#at++]);
        value += String.fromCharCode(code);
      } else {
        if (escaped === '\n') this.#line++;
        value += ESCAPES[escaped] ?? escaped;
      }
    }
  }
}

const ESCAPES: Readonly<Record<string, string>> = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

function lineEndsIn(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}
