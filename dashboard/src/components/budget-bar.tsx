import { formatUsdNanos } from '../format.js';

/** Spend against a budget as a meter; no budget shows the spend alone. */
export function BudgetBar({ spentNanos, limitNanos }: { spentNanos: number; limitNanos: number | null }) {
  if (!limitNanos) return <span>{formatUsdNanos(spentNanos)} (no budget)</span>;
  const ratio = Math.min(1, spentNanos / limitNanos);
  const level = ratio >= 1 ? 'over' : ratio >= 0.8 ? 'high' : 'ok';
  return (
    <span class="budget">
      <meter min={0} max={limitNanos} value={Math.min(spentNanos, limitNanos)} class={level} aria-label="budget used" />
      <span>
        {formatUsdNanos(spentNanos)} of {formatUsdNanos(limitNanos)}
      </span>
    </span>
  );
}
