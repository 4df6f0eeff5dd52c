import { DataTable } from '../components/data-table.js';
import { OrgRequired } from '../components/org-required.js';
import { Empty, ResourceView } from '../components/status-view.js';
import { formatNumber, formatUsdString } from '../format.js';
import { usePage } from '../page-context.js';
import { useResource } from '../use-resource.js';

interface PriceRow {
  model: string;
  priced: boolean;
  pricing: Record<string, unknown> | null;
}

const MAIN_PRICES = ['inputPerMillion', 'cachedInputPerMillion', 'outputPerMillion'] as const;

function otherPrices(pricing: Record<string, unknown>): string {
  return Object.entries(pricing)
    .filter(([name]) => !(MAIN_PRICES as readonly string[]).includes(name) && name !== 'maxOutputTokens' && name !== 'contextWindow')
    .map(([name, value]) => `${name.replace(/([A-Z])/g, ' $1').toLowerCase()}: ${typeof value === 'string' ? formatUsdString(value) : JSON.stringify(value)}`)
    .join('; ');
}

function PricingTable() {
  const { api, orgId } = usePage();
  const prices = useResource(() => api.get<{ data: PriceRow[] }>('/api/models/pricing'), [orgId]);
  return (
    <ResourceView resource={prices} what="models and pricing" feature="Model pricing">
      {({ data }) =>
        data.length === 0 ? (
          <Empty>No models are available to this organization.</Empty>
        ) : (
          <DataTable columns={['Model', 'Input / 1M tokens', 'Cached input / 1M', 'Output / 1M tokens', 'Context window', 'Other prices']}>
            {data.map((row) => (
              <tr key={row.model}>
                <th scope="row">{row.model}</th>
                {row.pricing ? (
                  <>
                    {MAIN_PRICES.map((name) => (
                      <td key={name}>{formatUsdString(row.pricing?.[name] as string | undefined)}</td>
                    ))}
                    <td>{formatNumber(row.pricing.contextWindow as number | undefined)}</td>
                    <td>{otherPrices(row.pricing) || '—'}</td>
                  </>
                ) : (
                  <td colSpan={5}>No price set: calls are refused unless the organization allows unpriced models.</td>
                )}
              </tr>
            ))}
          </DataTable>
        )
      }
    </ResourceView>
  );
}

export function ModelsPage() {
  return (
    <>
      <h1>Models and pricing</h1>
      <p class="hint">Prices in USD; an organization override replaces the global price.</p>
      <OrgRequired>
        <PricingTable />
      </OrgRequired>
    </>
  );
}
