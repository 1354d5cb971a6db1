/** The deployments the bench report bills (bench/report): small, medium and docs/design.md's 1 GiB/s case. */
import { DEFAULT_DEPLOYMENT, type Deployment } from './deployment.ts';

export interface NamedDeployment {
  readonly name: string;
  readonly deployment: Deployment;
}

const GIB_PER_SECOND_IN_MB = 1024 ** 3 / 1_000_000;

export const STANDARD_DEPLOYMENTS: readonly NamedDeployment[] = [
  { name: 'small: 1 MB/s, 16 partitions, 3 brokers', deployment: { ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: 1, partitions: 16 } },
  { name: 'medium: 100 MB/s, 256 partitions, 6 brokers', deployment: { ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: 100, partitions: 256, brokers: 6 } },
  { name: 'medium, 3 consumer groups, 1 day', deployment: { ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: 100, partitions: 256, brokers: 6, readFanout: 3, retentionHours: 24 } },
  { name: 'large: 1 GiB/s, 1,024 partitions, 12 brokers', deployment: { ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: GIB_PER_SECOND_IN_MB, partitions: 1024, brokers: 12 } },
];
