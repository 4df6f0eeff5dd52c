const NANOS_PER_USD = 1_000_000_000;

/** Integer nano-USD → "$1.234567" with enough digits that small per-request costs stay visible. */
export function formatUsdNanos(nanos: number): string {
  const sign = nanos < 0 ? '-' : '';
  const magnitude = Math.abs(nanos);
  const whole = Math.floor(magnitude / NANOS_PER_USD);
  const fraction = String(magnitude % NANOS_PER_USD).padStart(9, '0');
  const digits = whole >= 100 ? 2 : 6;
  const trimmed = fraction.slice(0, digits);
  return `${sign}$${whole.toLocaleString('en-US')}.${trimmed}`;
}

/** A USD decimal string from the API ("0.000123450") → "$0.000123". */
export function formatUsdString(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(amount);
  if (!match) return amount;
  const [, sign, whole, fraction = ''] = match;
  const digits = Number(whole) >= 100 ? 2 : 6;
  return `${sign}$${Number(whole).toLocaleString('en-US')}.${fraction.padEnd(digits, '0').slice(0, digits)}`;
}

/** USD decimal string → integer nano-USD (exact; no float arithmetic). */
export function usdToNanos(amount: string): number {
  const match = /^(\d+)(?:\.(\d{1,9}))?/.exec(amount.trim());
  if (!match) return 0;
  return Number(match[1]) * NANOS_PER_USD + Number((match[2] ?? '').padEnd(9, '0'));
}

export function formatNumber(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : value.toLocaleString('en-US');
}

export function formatPercent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)}%`;
}

/** Epoch seconds or ms, or an ISO string → local date and time. */
export function formatTime(value: number | string | null | undefined): string {
  if (value === null || value === undefined) return 'never';
  const date = typeof value === 'string' ? new Date(value) : new Date(value < 1e12 ? value * 1000 : value);
  return Number.isNaN(date.getTime()) ? String(value) : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}

export function formatMs(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${Math.round(value).toLocaleString('en-US')} ms`;
}
