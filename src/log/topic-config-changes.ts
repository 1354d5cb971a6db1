/**
 * Changes to a topic's configs, as Kafka's IncrementalAlterConfigs asks for them (set, delete,
 * append, subtract), and AlterConfigs' replace-all expressed as such changes. Pure: the caller
 * stores the result (the engine's registry, or the cluster's topic record by compare-and-swap).
 */
import { FerryError } from '../errors.ts';
import { listItems, parseTopicConfig, topicConfigDefinition, type TopicConfigs } from './topic-config.ts';

/** IncrementalAlterConfigs' operations (OpType 0..3: SET, DELETE, APPEND, SUBTRACT). */
export type ConfigChangeOp = 'set' | 'delete' | 'append' | 'subtract';

export interface ConfigChange {
  readonly name: string;
  readonly op: ConfigChangeOp;
  /** The value to set, or the list items to append or subtract; ignored by delete. */
  readonly value: string | null;
}

/**
 * An alteration of a topic's configs: changes as given (IncrementalAlterConfigs), or worked out
 * from the configs the topic has when the alteration applies (AlterConfigs' replace-all, which
 * must see configs another broker set a moment ago: a cluster applies it in a compare-and-swap).
 */
export type ConfigAlteration = readonly ConfigChange[] | ((current: TopicConfigs) => readonly ConfigChange[]);

/** `alteration` applied to `current`: its changes in order, checked as applyConfigChanges checks them. */
export function applyConfigAlteration(current: TopicConfigs, alteration: ConfigAlteration): TopicConfigs {
  return applyConfigChanges(current, typeof alteration === 'function' ? alteration(current) : alteration);
}

/**
 * `current` with `changes` applied in order, every value checked (parseTopicConfig): the first bad
 * change throws (InvalidConfig; InvalidArgument for a name given twice, as Kafka's INVALID_REQUEST),
 * so a request with any bad change changes nothing.
 */
export function applyConfigChanges(current: TopicConfigs, changes: readonly ConfigChange[]): TopicConfigs {
  const names = new Set<string>();
  const next: Record<string, string> = { ...current };
  for (const change of changes) {
    if (names.has(change.name)) throw new FerryError('InvalidArgument', `Error due to duplicate config keys: ${change.name}`);
    names.add(change.name);
    const definition = topicConfigDefinition(change.name);
    switch (change.op) {
      case 'set':
        next[change.name] = parseTopicConfig(change.name, change.value);
        break;
      case 'delete':
        delete next[change.name];
        break;
      case 'append':
      case 'subtract': {
        if (definition.type !== 'LIST') throw new FerryError('InvalidConfig', `Config value ${change.op} is not allowed for config key: ${change.name}`);
        // Kafka's base for a list: the topic's value, else the config's default.
        const base = listItems(next[change.name] ?? definition.defaultValue);
        const items = listItems(change.value ?? '');
        const result = change.op === 'append' ? [...base, ...items.filter((item) => !base.includes(item))] : base.filter((item) => !items.includes(item));
        next[change.name] = parseTopicConfig(change.name, result.join(','));
        break;
      }
      default:
        throw new FerryError('InvalidArgument', `unknown config operation ${String((change as { op: unknown }).op)}`);
    }
  }
  return next;
}

/** AlterConfigs' replace-all as changes: every entry set, every config set now but not named deleted. */
export function replaceAllChanges(current: TopicConfigs, wanted: Iterable<readonly [string, string | null]>): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const named = new Set<string>();
  for (const [name, value] of wanted) {
    named.add(name);
    changes.push({ name, op: 'set', value });
  }
  for (const name of Object.keys(current)) if (!named.has(name)) changes.push({ name, op: 'delete', value: null });
  return changes;
}
