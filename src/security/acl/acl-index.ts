import { assert } from '../../util/assert.ts';
import { type AccessControlEntry, PatternType, type ResourcePattern, type ResourceType, WILDCARD_RESOURCE } from './model.ts';

/** One resource pattern with its ACLs (never empty in the index). */
export interface ResourceAcls {
  readonly pattern: ResourcePattern;
  readonly entries: readonly AccessControlEntry[];
}

/** The patterns of one resource type: literal names by name, prefixes by prefix. */
class TypeIndex {
  readonly literal = new Map<string, ResourceAcls>();
  readonly prefixed = new Map<string, ResourceAcls>();
  /** The distinct lengths of the prefixes, ascending: a lookup tries one slice per length. */
  prefixLengths: number[] = [];
  readonly #prefixesOfLength = new Map<number, number>();

  addPrefixLength(length: number): void {
    const count = this.#prefixesOfLength.get(length) ?? 0;
    this.#prefixesOfLength.set(length, count + 1);
    if (count === 0) this.prefixLengths = [...this.prefixLengths, length].sort((a, b) => a - b);
  }

  removePrefixLength(length: number): void {
    const count = this.#prefixesOfLength.get(length);
    assert(count !== undefined && count > 0, `no prefix of length ${length} to remove`);
    if (count > 1) return void this.#prefixesOfLength.set(length, count - 1);
    this.#prefixesOfLength.delete(length);
    this.prefixLengths = this.prefixLengths.filter((l) => l !== length);
  }
}

/**
 * The ACLs by resource type and pattern, so that a check looks up only the patterns that apply
 * to one resource name: its literal name, the literal `*`, and its prefixes (one map lookup per
 * distinct prefix length in use). Never a scan of every ACL.
 */
export class AclIndex {
  readonly #types = new Map<ResourceType, TypeIndex>();
  #aclCount = 0;

  /** Replaces the ACLs of one resource pattern; no entries removes it. */
  set(pattern: ResourcePattern, entries: readonly AccessControlEntry[]): void {
    assert(pattern.patternType === PatternType.LITERAL || pattern.patternType === PatternType.PREFIXED, `a stored pattern is LITERAL or PREFIXED, not ${pattern.patternType}`);
    let index = this.#types.get(pattern.resourceType);
    if (index === undefined) this.#types.set(pattern.resourceType, (index = new TypeIndex()));
    const prefixed = pattern.patternType === PatternType.PREFIXED;
    const names = prefixed ? index.prefixed : index.literal;
    const previous = names.get(pattern.name);
    if (previous !== undefined) this.#aclCount -= previous.entries.length;
    if (entries.length === 0) {
      if (previous === undefined) return;
      names.delete(pattern.name);
      if (prefixed) index.removePrefixLength(pattern.name.length);
      return;
    }
    names.set(pattern.name, { pattern, entries });
    this.#aclCount += entries.length;
    if (prefixed && previous === undefined) index.addPrefixLength(pattern.name.length);
  }

  get(pattern: ResourcePattern): ResourceAcls | undefined {
    const index = this.#types.get(pattern.resourceType);
    if (index === undefined) return undefined;
    return (pattern.patternType === PatternType.PREFIXED ? index.prefixed : index.literal).get(pattern.name);
  }

  /**
   * Visits every pattern of this type that applies to `name` (Kafka's resource matching: the
   * literal name, the literal `*`, every prefix of the name) until `visit` returns true.
   * Names compare case-sensitively, character by character.
   */
  visitApplying(resourceType: ResourceType, name: string, visit: (resource: ResourceAcls) => boolean): void {
    const index = this.#types.get(resourceType);
    if (index === undefined) return;
    const exact = index.literal.get(name);
    if (exact !== undefined && visit(exact)) return;
    for (const length of index.prefixLengths) {
      if (length > name.length) break;
      const prefix = index.prefixed.get(length === name.length ? name : name.slice(0, length));
      if (prefix !== undefined && visit(prefix)) return;
    }
    if (name === WILDCARD_RESOURCE) return;
    const wildcard = index.literal.get(WILDCARD_RESOURCE);
    if (wildcard !== undefined) visit(wildcard);
  }

  /** Every resource pattern of one type (all types if null). */
  *resources(resourceType: ResourceType | null = null): Generator<ResourceAcls> {
    for (const [type, index] of this.#types) {
      if (resourceType !== null && type !== resourceType) continue;
      yield* index.literal.values();
      yield* index.prefixed.values();
    }
  }

  /** How many ACLs (entries, not patterns) the index holds. */
  aclCount(): number {
    return this.#aclCount;
  }
}
