import { formatUsdNanos } from '../format.js';

/**
 * Spend against a budget as a meter; no budget shows the spend alone. `spentNanos` is undefined
 * while the spend is still loading: the bar says so instead of showing $0, which would be a claim.
 */
export function BudgetBar({ spentNanos, limitNanos }: { spentNanos: number | undefined; limitNanos: number | null }) {
  const spent = spentNanos === undefined ? '…' : formatUsdNanos(spentNanos);
  if (!limitNanos) return <span aria-busy={spentNanos === undefined}>{spent} (no budget)</span>;
  const ratio = Math.min(1, (spentNanos ?? 0) / limitNanos);
  const level = ratio >= 1 ? 'over' : ratio >= 0.8 ? 'high' : 'ok';
  return (
    <span class="budget" aria-busy={spentNanos === undefined}>
      {spentNanos !== undefined && <meter min={0} max={limitNanos} value={Math.min(spentNanos, limitNanos)} class={level} aria-label="budget used" />}
      <span>
        {spent} of {formatUsdNanos(limitNanos)}
      </span>
    </span>
  );
}
