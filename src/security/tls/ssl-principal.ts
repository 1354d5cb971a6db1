/**
 * The principal of a TLS client certificate, as Kafka's DefaultKafkaPrincipalBuilder builds it:
 * the subject's distinguished name in RFC 2253 form (`CN=alice,OU=eng,O=Acme`), passed through
 * ssl.principal.mapping.rules (Kafka's SslPrincipalMapper, KIP-371).
 *
 * Attribute names are OpenSSL's short names; Java prints a few rare ones by OID (emailAddress as
 * 1.2.840.113549.1.9.1=#...), and a multi-valued RDN (`OU=a+CN=b`) reads as two RDNs here. Rules
 * written for the usual CN/OU/O/L/ST/C names map the same in both.
 */
import type { X509Certificate } from 'node:crypto';
import { FerryError } from '../../errors.ts';

/** The rules an operator writes: a long one is a mistake, and each rule is a regular expression run per connection. */
const MAPPING_RULES_CHARS_MAX = 16 * 1024;

/**
 * The subject in RFC 2253 form: its RDNs last-to-first, comma-separated. The certificate's
 * `subject` lists them first-to-last, one per line, each value already escaped as RFC 2253 asks
 * (`O=Acme\, Inc.`).
 */
export function distinguishedName(certificate: X509Certificate): string {
  return certificate.subject
    .split('\n')
    .filter((rdn) => rdn !== '')
    .reverse()
    .join(',');
}

type MappingRule = { readonly kind: 'default' } | { readonly kind: 'rule'; readonly pattern: RegExp; readonly replacement: string; readonly caseChange: '' | 'L' | 'U'; readonly text: string };

/** Kafka's SslPrincipalMapper: the first rule whose pattern matches the whole name maps it; none matching fails the connection. */
export class SslPrincipalMapper {
  readonly #rules: readonly MappingRule[];
  readonly #text: string;

  constructor(rules: readonly MappingRule[], text: string) {
    this.#rules = rules;
    this.#text = text;
  }

  /**
   * Parses ssl.principal.mapping.rules: `DEFAULT` and `RULE:pattern/replacement/[L|U]`, separated
   * by commas or newlines (a `/` or `,` inside a rule is escaped with `\`). A FerryError
   * (InvalidArgument) names the rule that does not parse.
   */
  static parse(text: string): SslPrincipalMapper {
    if (text.length > MAPPING_RULES_CHARS_MAX) throw invalid(`ssl.principal.mapping.rules is longer than ${MAPPING_RULES_CHARS_MAX} characters`);
    const rules: MappingRule[] = [];
    let rest = text.trim();
    while (rest !== '') {
      const match = /^(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?))\s*(?:[,\n]\s*|$)/.exec(rest);
      if (match === null) throw invalid(`ssl.principal.mapping.rules: '${rest.split(/[,\n]/)[0]}' is not DEFAULT or RULE:pattern/replacement/[L|U]`);
      if (match[1] !== undefined) rules.push({ kind: 'default' });
      else rules.push({ kind: 'rule', pattern: compile(match[2]!), replacement: javaReplacement(match[3]!), caseChange: match[4] as '' | 'L' | 'U', text: match[0].trim() });
      rest = rest.slice(match[0].length);
    }
    if (rules.length === 0) throw invalid('ssl.principal.mapping.rules is empty (DEFAULT keeps the distinguished name)');
    return new SslPrincipalMapper(rules, text);
  }

  /** The principal name for a distinguished name; null when no rule applies (Kafka fails the connection). */
  map(name: string): string | null {
    for (const rule of this.#rules) {
      if (rule.kind === 'default') return name;
      if (!rule.pattern.test(name)) continue;
      const mapped = name.replace(rule.pattern, rule.replacement);
      return rule.caseChange === 'L' ? mapped.toLowerCase() : rule.caseChange === 'U' ? mapped.toUpperCase() : mapped;
    }
    return null;
  }

  toString(): string {
    return this.#text;
  }
}

/** A rule's pattern, matched against the whole name as Java's Matcher.matches() does. */
function compile(pattern: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern.replace(/\\\//g, '/')})$`);
  } catch (error) {
    throw invalid(`ssl.principal.mapping.rules: pattern '${pattern}' is not a regular expression (${(error as Error).message})`);
  }
}

/** Java's replacement string in JavaScript's: `$1` stays, `\x` is a literal x (`\$` a dollar: `$$`). */
function javaReplacement(replacement: string): string {
  return replacement.replace(/\\(.)|\$(\d)/g, (_all, escaped: string | undefined, group: string | undefined) => (escaped !== undefined ? (escaped === '$' ? '$$' : escaped) : `$${group}`));
}

function invalid(message: string): FerryError {
  return new FerryError('InvalidArgument', message);
}
