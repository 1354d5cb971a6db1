/**
 * Units and number formatting. Throughput is in MB/s with MB = 10^6 bytes (as disk and network
 * vendors quote it); sizes of buffers and data sets are in binary units (KiB, MiB).
 */
export const KIB_BYTES = 1024;
export const MIB_BYTES = 1024 * KIB_BYTES;
const MB_BYTES = 1_000_000;
const MS_PER_SECOND = 1000;

export function mbPerSecond(bytes: number, elapsedMs: number): number {
  return bytes / MB_BYTES / (elapsedMs / MS_PER_SECOND);
}

export function perSecond(count: number, elapsedMs: number): number {
  return count / (elapsedMs / MS_PER_SECOND);
}

/** A fixed-point number with thousands separators: 1234567.8 -> "1,234,567.8". */
export function formatNumber(value: number, fractionDigits = 0): string {
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { minimumFractionDigits: fractionDigits, maximumFractionDigits: fractionDigits });
}

/** Three significant digits at most, for values spanning decades (latencies, ratios). */
export function formatSignificant(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  return formatNumber(value, Math.max(0, 2 - magnitude));
}

export function formatBytes(bytes: number): string {
  if (bytes >= MIB_BYTES && bytes % MIB_BYTES === 0) return `${bytes / MIB_BYTES} MiB`;
  if (bytes >= MIB_BYTES) return `${formatNumber(bytes / MIB_BYTES, 1)} MiB`;
  if (bytes >= KIB_BYTES && bytes % KIB_BYTES === 0) return `${bytes / KIB_BYTES} KiB`;
  return `${formatNumber(bytes)} B`;
}
