/** A month's bill for a deployment: Ferry on S3 Express One Zone + S3 Standard beside classic Kafka (docs/cost-model.md). */
export {
  type Bill,
  type BillLine,
  type Comparison,
  compare,
  consumerCrossZoneShare,
  crossZoneFollowers,
  DISK_FILL_FRACTION_MAX,
  ferryBill,
  kafkaBill,
  NOT_MODELLED,
  producerCrossZoneShare,
  putsPerObject,
  walCycleSeconds,
  walShape,
  type WalShape,
} from './bill.ts';
export { checkDeployment, DEFAULT_DEPLOYMENT, DEFAULT_FERRY_KNOBS, type Deployment, DeploymentError, type FerryKnobs } from './deployment.ts';
export { STANDARD_DEPLOYMENTS } from './standard-deployments.ts';
