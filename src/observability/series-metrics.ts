import type { Registry } from 'prom-client';

/**
 * Counters and histograms that are counted into plain per-series records as calls happen and only
 * turned into Prometheus samples when /metrics is scraped. prom-client's own Counter and Histogram
 * hash the label object on every update (sorting names, validating values, building a key string):
 * seven such updates per call cost ~2% of the gateway's CPU at saturation and ~1.3 KB of garbage.
 * Here the caller finds its series once per call by a string key it builds itself, and each update
 * is an addition.
 *
 * Both kinds register with a prom-client Registry through its metric interface (`name`, `get()`,
 * `reset()`), so the exposition text, the JSON form and the default process metrics stay
 * prom-client's.
 */

type Labels = Record<string, string>;

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface RegisteredMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }>;
  reset(): void;
}

function register(registry: Registry, metric: RegisteredMetric): void {
  // The registry takes any object with this shape; its declared type is prom-client's own classes.
  registry.registerMetric(metric as unknown as Parameters<Registry['registerMetric']>[0]);
}

/**
 * One metric family: its series by the caller's key, registered with the registry under `name`.
 * Subclasses say what a series holds and how it becomes samples.
 */
abstract class SeriesFamily<Series extends { readonly labels: Labels }> {
  protected readonly series = new Map<string, Series>();

  constructor(registry: Registry, name: string, help: string, type: 'counter' | 'histogram') {
    register(registry, {
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => ({ name, help, type, aggregator: 'sum', values: this.samples() }),
      reset: () => this.series.clear(),
    });
  }

  /** The series for `key`, created with `labels()` the first time the key is seen. */
  at(key: string, labels: () => Labels): Series {
    let series = this.series.get(key);
    if (series === undefined) {
      series = this.create(labels());
      this.series.set(key, series);
    }
    return series;
  }

  protected abstract create(labels: Labels): Series;
  protected abstract samples(): Sample[];
}

export interface CounterSeries {
  readonly labels: Labels;
  /** Added to on each event; read at scrape time. */
  value: number;
}

/** A counter whose series are looked up by a caller-built key (see the module comment). */
export class SeriesCounter extends SeriesFamily<CounterSeries> {
  /**
   * @param divisor divides each series' value when it is exposed: lets a caller count in exact
   * integers (nano-dollars) and expose a decimal unit (USD).
   */
  constructor(registry: Registry, name: string, help: string, private readonly divisor = 1) {
    super(registry, name, help, 'counter');
  }

  protected create(labels: Labels): CounterSeries {
    return { labels, value: 0 };
  }

  protected samples(): Sample[] {
    const samples: Sample[] = [];
    for (const series of this.series.values()) samples.push({ labels: series.labels, value: series.value / this.divisor });
    return samples;
  }
}

export interface HistogramSeries {
  readonly labels: Labels;
  /** Observations per bucket (not cumulative); the last slot is above the largest bound. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/** A histogram whose series are looked up by a caller-built key (see the module comment). */
export class SeriesHistogram extends SeriesFamily<HistogramSeries> {
  constructor(registry: Registry, private readonly name: string, help: string, private readonly upperBounds: readonly number[]) {
    super(registry, name, help, 'histogram');
  }

  protected create(labels: Labels): HistogramSeries {
    return { labels, buckets: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
  }

  observe(series: HistogramSeries, value: number): void {
    const bounds = this.upperBounds;
    let index = 0;
    while (index < bounds.length && value > bounds[index]!) index += 1;
    series.buckets[index]! += 1;
    series.sum += value;
    series.count += 1;
  }

  protected samples(): Sample[] {
    const samples: Sample[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, index) => {
        cumulative += series.buckets[index]!;
        samples.push({ labels: { le: bound, ...series.labels }, value: cumulative, metricName: bucketName });
      });
      samples.push({ labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: bucketName });
      samples.push({ labels: series.labels, value: series.sum, metricName: `${this.name}_sum` });
      samples.push({ labels: series.labels, value: series.count, metricName: `${this.name}_count` });
    }
    return samples;
  }
}
