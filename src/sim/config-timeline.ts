import { type AdminOp, type AlterConfigsOp, type ClientOp, isAdminOp } from './history.ts';
import { mayHaveTakenEffect as adminMayHaveTakenEffect } from './incarnations.ts';

/** The config acks-all-min-insync and acks-resume-with-quorum judge by. */
export const MIN_INSYNC_REPLICAS = 'min.insync.replicas';
/** Answers after which an alter may still have taken effect (the broker gave up waiting, or no answer came). */
const OUTCOME_UNKNOWN = 'REQUEST_TIMED_OUT';
const NOT_SENT = 'not-sent';

/** Whether an alter may have taken effect: it succeeded, or its outcome is unknown. */
export function alterMayHaveTakenEffect(op: AlterConfigsOp): boolean {
  return op.outcome.ok || op.outcome.error === OUTCOME_UNKNOWN || (!op.outcome.answered && op.outcome.error !== NOT_SENT);
}

/** Something that set a topic's config: an alter of it, or a create (a new incarnation starts at the default). */
interface Setting {
  readonly startMs: number;
  readonly endMs: number;
  /** The value it set; null: the default (a DELETE, or a create). */
  readonly value: string | null;
  readonly ok: boolean;
  /** An outcome that is not known: it may take effect at any later time (a request held by a paused broker). */
  readonly unknown: boolean;
}

/**
 * The values one config of one topic may have had over a run, from the alters of it and the
 * topic's creates in the history (issue 25, item 4). A value is surely in effect on a broker once
 * the alter that set it was answered with success, the propagation bound passed (every broker has
 * read it: a lease and two scans in a cluster) and the broker was healthy as long (one cut from the
 * control store acts on what it last read); until then, and for any setting whose order against it
 * is unknown (one that overlaps it, one after it, one whose outcome is unknown), each of their values
 * may be. A create brings the default back. Settings are few (a run alters a topic a few times), so
 * each question walks them all.
 */
export class ConfigTimeline {
  readonly #settings: Setting[];
  readonly #defaultValue: string;
  readonly #propagationMs: number;

  constructor(ops: readonly ClientOp[], topic: string, name: string, defaultValue: string, propagationMs: number) {
    this.#defaultValue = defaultValue;
    this.#propagationMs = propagationMs;
    this.#settings = [];
    for (const op of ops) {
      if (op.kind === 'alter-configs' && op.topic === topic && alterMayHaveTakenEffect(op)) {
        const config = op.configs.find((candidate) => candidate.name === name);
        if (config !== undefined) this.#settings.push(settingOf(op, config.value));
      } else if (isAdminOp(op) && op.kind === 'create-topic' && op.topic === topic && adminMayHaveTakenEffect(op)) {
        this.#settings.push(settingOf(op, null));
      }
    }
  }

  /** Whether nothing ever set this config (its default held all along). */
  get constant(): boolean {
    return this.#settings.every((setting) => setting.value === null);
  }

  /** When what may be in effect changes: each setting's start, and its end plus the propagation bound. */
  changesMs(): number[] {
    return this.#settings.flatMap((setting) => [setting.startMs, setting.endMs + this.#propagationMs]).sort((a, b) => a - b);
  }

  /**
   * Every value the config may have had, on a broker healthy since `healthySinceMs`, at some time in
   * [fromMs, toMs] (healthySinceMs -Infinity: any broker's view that is not stale).
   */
  possibleValues(fromMs: number, toMs: number, healthySinceMs = -Infinity): string[] {
    const surelyBy = fromMs - this.#propagationMs;
    let last: Setting | null = null;
    if (healthySinceMs <= surelyBy) {
      for (const setting of this.#settings) if (setting.ok && setting.endMs <= surelyBy && (last === null || setting.endMs > last.endMs)) last = setting;
    }
    const values = new Set<string>([last?.value ?? this.#defaultValue]);
    for (const setting of this.#settings) {
      if (setting === last || setting.startMs > toMs) continue;
      if (last === null || setting.unknown || setting.endMs >= last.startMs) values.add(setting.value ?? this.#defaultValue);
    }
    return [...values];
  }
}

function settingOf(op: AlterConfigsOp | AdminOp, value: string | null): Setting {
  const outcome = op.outcome;
  return { startMs: op.startMs, endMs: op.endMs, value, ok: outcome.ok, unknown: !outcome.ok };
}
