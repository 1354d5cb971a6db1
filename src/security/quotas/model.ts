// Kafka's client quota model (org.apache.kafka.common.quota.ClientQuotaEntity, QuotaConfig): the
// entities quotas are set on and the keys they set.

/** Kafka's entity types (ClientQuotaEntity.USER, CLIENT_ID, IP). */
export type QuotaEntityType = 'user' | 'client-id' | 'ip';

/**
 * The order an entity's parts are listed in answers and messages: the order Kafka's HashMap of
 * entity types gives them (`{client-id=app, user=alice}`), so that messages read as Kafka's.
 */
export const QUOTA_ENTITY_TYPES: readonly QuotaEntityType[] = ['client-id', 'user', 'ip'];

/** The name a default entity's part has in the protocol (null) and in Kafka's records and tools (`<default>`). */
export const DEFAULT_ENTITY_NAME = '<default>';

/**
 * Kafka's ClientQuotaEntity: at most one part per type, each a name or null for the type's
 * default entity (`<default>`); a type that is absent is not part of the entity. Valid ones
 * (validate.ts) are a user, a client id, both, or an IP alone.
 */
export type QuotaEntity = Readonly<Partial<Record<QuotaEntityType, string | null>>>;

/** One part of an entity as the protocol carries it. */
export interface QuotaEntityPart {
  readonly entityType: string;
  readonly entityName: string | null;
}

/** The entity's parts in QUOTA_ENTITY_TYPES order. */
export function entityParts(entity: QuotaEntity): QuotaEntityPart[] {
  return QUOTA_ENTITY_TYPES.filter((type) => entity[type] !== undefined).map((type) => ({ entityType: type, entityName: entity[type]! }));
}

/** A string naming the entity exactly (absent, default and named parts kept apart): a map key. */
export function entityId(entity: QuotaEntity): string {
  return JSON.stringify(QUOTA_ENTITY_TYPES.map((type) => (entity[type] === undefined ? 0 : entity[type])));
}

/** Kafka's ClientQuotaEntity.toString (`ClientQuotaEntity(entries={client-id=app, user=null})`), as its messages name entities. */
export function entityText(parts: readonly QuotaEntityPart[]): string {
  return `ClientQuotaEntity(entries={${parts.map((part) => `${part.entityType}=${part.entityName}`).join(', ')}})`;
}

/**
 * The quota keys Ferry enforces (Kafka's QuotaConfig for users and client ids):
 * producer_byte_rate and consumer_byte_rate in bytes per second (Kafka's LONG configs),
 * request_percentage in percent of one request thread (a DOUBLE).
 */
export type QuotaKey = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage';

export const PRODUCER_BYTE_RATE: QuotaKey = 'producer_byte_rate';
export const CONSUMER_BYTE_RATE: QuotaKey = 'consumer_byte_rate';
export const REQUEST_PERCENTAGE: QuotaKey = 'request_percentage';

/** Kafka's config type of each key, which decides how its values are checked (validate.ts). */
export const QUOTA_KEY_TYPES: ReadonlyMap<QuotaKey, 'LONG' | 'DOUBLE'> = new Map([
  [PRODUCER_BYTE_RATE, 'LONG'],
  [CONSUMER_BYTE_RATE, 'LONG'],
  [REQUEST_PERCENTAGE, 'DOUBLE'],
]);

/**
 * Keys Kafka takes that Ferry does not enforce, refused with Kafka's "Invalid configuration key"
 * rather than stored to no effect: controller_mutation_rate (KIP-599: CreateTopics, CreatePartitions
 * and DeleteTopics throttled per partition mutation) and connection_creation_rate (KIP-612: the
 * only key of IP entities, enforced where connections are accepted).
 */
export const UNENFORCED_QUOTA_KEYS: readonly string[] = ['controller_mutation_rate', 'connection_creation_rate'];

export function isQuotaKey(key: string): key is QuotaKey {
  return QUOTA_KEY_TYPES.has(key as QuotaKey);
}

/** The quotas set on one entity, by key. */
export type EntityQuotas = ReadonlyMap<QuotaKey, number>;
