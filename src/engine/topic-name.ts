import { FerryError } from '../errors.ts';

/** Kafka's limit: a partition directory `<topic>-<partition>` must fit in a 255-byte file name. */
export const TOPIC_NAME_LENGTH_MAX = 249;
const LEGAL_TOPIC_NAME = /^[a-zA-Z0-9._-]+$/;

/** Throws InvalidArgument unless `name` is a topic name Kafka would accept. */
export function validateTopicName(name: string): void {
  const problem =
    name.length === 0
      ? 'is empty'
      : name === '.' || name === '..'
        ? 'cannot be "." or ".."'
        : name.length > TOPIC_NAME_LENGTH_MAX
          ? `is longer than ${TOPIC_NAME_LENGTH_MAX} characters`
          : !LEGAL_TOPIC_NAME.test(name)
            ? 'may contain only ASCII letters, digits, ".", "_" and "-"'
            : null;
  if (problem !== null) throw new FerryError('InvalidArgument', `topic name ${JSON.stringify(name)} ${problem}`);
}
