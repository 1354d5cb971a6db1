// JAAS: Kafka's sasl.jaas.config values and JAAS files, as Java's tokenizers read them.
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { FerryError } from '../../../src/errors.ts';
import { ownCredentialsOf, parseJaasConfigModules, parseJaasFile, parseSaslJaasConfig, PLAIN_LOGIN_MODULE, plainUsersOf, SCRAM_LOGIN_MODULE } from '../../../src/security/sasl/jaas.ts';

function errorOf(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).kind).toBe('InvalidConfig');
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected an error');
}

describe('sasl.jaas.config', () => {
  test("Kafka's PLAIN example: users for the server, the broker's own credentials for its clients", () => {
    const module = parseSaslJaasConfig(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";',
    );
    expect(module.loginModule).toBe(PLAIN_LOGIN_MODULE);
    expect(module.controlFlag).toBe('required');
    expect([...module.options.keys()]).toEqual(['username', 'password', 'user_admin', 'user_alice']);
    expect(plainUsersOf([module])).toEqual(
      new Map([
        ['admin', 'admin-secret'],
        ['alice', 'alice-secret'],
      ]),
    );
    expect(ownCredentialsOf([module], PLAIN_LOGIN_MODULE)).toEqual({ username: 'admin', password: 'admin-secret' });
    expect(ownCredentialsOf([module], SCRAM_LOGIN_MODULE)).toBeNull();
  });

  test('the ScramLoginModule form, across lines, with a flag in any case and unquoted values', () => {
    const module = parseSaslJaasConfig("org.apache.kafka.common.security.scram.ScramLoginModule\n  REQUIRED\n  username=admin\n  password='admin-secret'\n  tokenauth=false;");
    expect(module).toEqual({
      loginModule: SCRAM_LOGIN_MODULE,
      controlFlag: 'required',
      options: new Map([
        ['username', 'admin'],
        ['password', 'admin-secret'],
        ['tokenauth', 'false'],
      ]),
    });
    expect(plainUsersOf([module]).size).toBe(0); // user_ options count in PlainLoginModule only
    for (const flag of ['requisite', 'Sufficient', 'OPTIONAL']) expect(parseSaslJaasConfig(`M ${flag};`).controlFlag).toBe(flag.toLowerCase() as never);
  });

  test('quoting and escapes as StreamTokenizer: \\n \\t \\" \\\\, octal, any other character itself; ; = and spaces inside quotes', () => {
    const module = parseSaslJaasConfig(String.raw`M required a="x\"y\\z" b="l1\nl2\tt" c="\101\7\477\q" d="; = //not a comment" e='it"s' f="" g=`.concat('é€;'));
    expect(module.options.get('a')).toBe('x"y\\z');
    expect(module.options.get('b')).toBe('l1\nl2\tt');
    expect(module.options.get('c')).toBe('A\x07\x277q'); // \477 is \47 then '7', as Java reads it
    expect(module.options.get('d')).toBe('; = //not a comment');
    expect(module.options.get('e')).toBe('it"s');
    expect(module.options.get('f')).toBe('');
    expect(module.options.get('g')).toBe('é€');
  });

  test('comments: // and /* */ and, as in Java, a lone / to the end of its line', () => {
    const module = parseSaslJaasConfig('M /* the flag: */ required // a comment\n a="1" /* b="2" */ c=/tmp/x\n"3";');
    // `c=/tmp/x` loses its value to the comment, so the next line's `"3"` becomes it: Java does the same.
    expect(module.options).toEqual(
      new Map([
        ['a', '1'],
        ['c', '3'],
      ]),
    );
    expect(errorOf(() => parseSaslJaasConfig('M required path=/tmp/x;'))).toBe("sasl.jaas.config line 1: Value not specified for key 'path' in JAAS config");
  });

  test("a name given twice keeps its last value (Java's HashMap); the first PLAIN module holding a user wins", () => {
    expect(parseSaslJaasConfig('M required a="1" a="2";').options.get('a')).toBe('2');
    const modules = parseJaasConfigModules(`${PLAIN_LOGIN_MODULE} required user_bob="first"; ${PLAIN_LOGIN_MODULE} optional user_bob="second" user_="nobody";`);
    expect(plainUsersOf(modules)).toEqual(new Map([['bob', 'first']]));
  });

  test("Kafka's errors, one line each", () => {
    expect(errorOf(() => parseSaslJaasConfig('  /* nothing */ '))).toBe('sasl.jaas.config: Login module not specified in JAAS config');
    expect(errorOf(() => parseSaslJaasConfig('M'))).toBe('sasl.jaas.config line 1: Login module control flag not specified in JAAS config');
    expect(errorOf(() => parseSaslJaasConfig('M mandatory;'))).toBe("sasl.jaas.config line 1: Invalid login module control flag 'mandatory' in JAAS config");
    expect(errorOf(() => parseSaslJaasConfig('M required a="1"'))).toBe("sasl.jaas.config line 1: JAAS config entry not terminated by semi-colon (login module 'M')");
    expect(errorOf(() => parseSaslJaasConfig('M required a=;'))).toBe("sasl.jaas.config line 1: Value not specified for key 'a' in JAAS config");
    expect(errorOf(() => parseSaslJaasConfig('M required;\nN optional;'))).toBe('sasl.jaas.config: JAAS config property contains 2 login modules, should be 1 module');
    expect(errorOf(() => parseSaslJaasConfig('; M required;'))).toBe('sasl.jaas.config line 1: Login module not specified in JAAS config (found ";")');
    expect(errorOf(() => parseSaslJaasConfig('M required a="x\n";'))).toBe('sasl.jaas.config line 1: a quoted string is not closed on its line');
    expect(errorOf(() => parseSaslJaasConfig('M required /* a="x";'))).toBe('sasl.jaas.config line 1: a /* comment is never closed');
  });

  test('errors never quote a password', () => {
    for (const value of [
      'M required username="admin" password="s3cret-value"',
      'M required username=admin s3cret-value;',
      'M required password="s3cret-value" =;',
      'M "s3cret-value";',
      'M required password="s3cret-value\\',
      'M required password="s3cret-value',
    ])
      expect(errorOf(() => parseSaslJaasConfig(value))).not.toContain('s3cret');
    expect(errorOf(() => ownCredentialsOf([parseSaslJaasConfig('M required password="s3cret";')], 'M'))).toBe("JAAS login module 'M' has a password but no username");
  });
});

describe('JAAS files', () => {
  const file = `
// Kafka's broker JAAS file, KafkaServer and KafkaClient sections
KafkaServer {
    org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin"
    password="admin-secret"
    user_admin="admin-secret"
    user_alice="alice-secret";

    org.apache.kafka.common.security.scram.ScramLoginModule sufficient
    username=admin password="scram-secret";
};

/* a client section */
KafkaClient {
  org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-secret";
};
sasl_ssl.KafkaServer { "org.apache.kafka.common.security.plain.PlainLoginModule" "required" user_x="y"; };
Empty { };
`;

  test('sections by name, each with its modules in order', () => {
    const sections = parseJaasFile(file);
    expect([...sections.keys()]).toEqual(['KafkaServer', 'KafkaClient', 'sasl_ssl.KafkaServer', 'Empty']);
    const server = sections.get('KafkaServer')!;
    expect(server.map((module) => [module.loginModule, module.controlFlag])).toEqual([
      [PLAIN_LOGIN_MODULE, 'required'],
      [SCRAM_LOGIN_MODULE, 'sufficient'],
    ]);
    expect(plainUsersOf(server)).toEqual(
      new Map([
        ['admin', 'admin-secret'],
        ['alice', 'alice-secret'],
      ]),
    );
    expect(ownCredentialsOf(server, SCRAM_LOGIN_MODULE)).toEqual({ username: 'admin', password: 'scram-secret' });
    expect(ownCredentialsOf(sections.get('KafkaClient')!, PLAIN_LOGIN_MODULE)).toEqual({ username: 'alice', password: 'alice-secret' });
    expect(plainUsersOf(sections.get('sasl_ssl.KafkaServer')!)).toEqual(new Map([['x', 'y']]));
    expect(sections.get('Empty')).toEqual([]);
  });

  test("what Java's ConfigFile refuses, with the line", () => {
    expect(errorOf(() => parseJaasFile("KafkaServer { M required password='x'; };"))).toBe(
      "JAAS file line 1: expected [option value] of option 'password': single quotes are not taken in a JAAS file, use double quotes",
    );
    expect(errorOf(() => parseJaasFile('KafkaServer {\n M required\n port=9092; };'))).toBe("JAAS file line 3: expected [option value] of option 'port', found a number: quote it");
    expect(errorOf(() => parseJaasFile('A { M required; };\nA { M required; };'))).toBe("JAAS file line 2: Can not specify multiple entries for 'A'");
    expect(errorOf(() => parseJaasFile('A { M required;'))).toBe('JAAS file line 1: expected [module class name], found the end of the input');
    expect(errorOf(() => parseJaasFile('A { M bogus; };'))).toBe("JAAS file line 1: Invalid control flag, 'bogus'");
    expect(errorOf(() => parseJaasFile('A { M required; }'))).toBe('JAAS file line 1: expected [;], found the end of the input');
    expect(errorOf(() => parseJaasFile('A M required; };'))).toBe('JAAS file line 1: expected [{], found a word');
    expect(errorOf(() => parseJaasFile('A { M required a:b="c"; };'))).toBe('JAAS file line 1: expected [=], found ":"');
  });
});

test('fuzz: any text parses or fails with one InvalidConfig line, in both forms', () => {
  const pieces = fc.constantFrom('M', ' ', '\n', 'required', 'optional', '=', ';', '{', '}', '"', "'", '\\', '/', '*', 'a', '1', '-', 'é', 'user_x', '"v"', '/*', '*/', '//');
  const text = fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.array(pieces, { maxLength: 30 }).map((parts) => parts.join('')),
  );
  fc.assert(
    fc.property(text, (value) => {
      for (const parse of [() => parseSaslJaasConfig(value), () => parseJaasFile(value)]) {
        try {
          parse();
        } catch (error) {
          if (!(error instanceof FerryError) || error.kind !== 'InvalidConfig' || error.message.includes('\n')) throw error;
        }
      }
    }),
    { numRuns: 2000 },
  );
});
