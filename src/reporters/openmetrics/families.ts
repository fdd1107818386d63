/**
 * The metrics of a watch as plain data, and their exposition text. A watch
 * builds one `MetricFamily[]` per completed round (conns.ts, locks.ts: pure),
 * and `renderExposition` turns it into Prometheus text or OpenMetrics through
 * prom-client, which owns the format: HELP/TYPE lines, label-value escaping,
 * the `_total` suffix rules and `# EOF`. A fresh registry per round means a
 * series that vanished (a holder gone, a lock freed) is gone from the next
 * scrape instead of lingering at its last value.
 */

import type {RegistryContentType} from 'prom-client'

/** Prometheus label values; an empty value is the same as the label being absent, so it is left out. */
export type Labels = Readonly<Record<string, string>>

export interface MetricSample {
  labels: Labels
  value: number
}

export interface MetricFamily {
  /** Prometheus conventions: `pooltool_` prefix, base unit in the name (`_seconds`, `_bytes`), counters end in `_total`. */
  name: string
  help: string
  type: 'gauge' | 'counter'
  samples: MetricSample[]
}

export type ExpositionFormat = 'prometheus' | 'openmetrics'

/** What an HTTP client gets: a scraper that asks for OpenMetrics gets it, everyone else the 0.0.4 text format. */
export function formatForAccept(accept: string | undefined): ExpositionFormat {
  return accept !== undefined && /application\/openmetrics-text/i.test(accept) ? 'openmetrics' : 'prometheus'
}

/** Builds families one sample at a time, keeping each family's label names in the order first seen. */
export class FamilyBuilder {
  private readonly families = new Map<string, MetricFamily>()

  add(name: string, type: MetricFamily['type'], help: string, labels: Labels, value: number | undefined | null): void {
    // A figure the server did not send is absent from the exposition, never 0.
    if (value === undefined || value === null || !Number.isFinite(value)) return
    let family = this.families.get(name)
    if (!family) {
      family = {name, help, type, samples: []}
      this.families.set(name, family)
    }
    family.samples.push({labels: withoutEmpty(labels), value})
  }

  gauge(name: string, help: string, labels: Labels, value: number | undefined | null): void {
    this.add(name, 'gauge', help, labels, value)
  }

  counter(name: string, help: string, labels: Labels, value: number | undefined | null): void {
    this.add(name, 'counter', help, labels, value)
  }

  build(): MetricFamily[] {
    return [...this.families.values()]
  }
}

function withoutEmpty(labels: Labels): Labels {
  return Object.fromEntries(Object.entries(labels).filter(([, value]) => value !== ''))
}

/** The text a scrape returns, and its Content-Type. */
export interface Exposition {
  contentType: string
  text: string
}

/**
 * One exposition of `families`. prom-client is loaded here, on first use: only a watch that exports
 * metrics pays for it.
 */
export async function renderExposition(families: readonly MetricFamily[], format: ExpositionFormat): Promise<Exposition> {
  const {Counter, Gauge, Registry} = (await import('prom-client')).default
  const registry = new Registry<RegistryContentType>()
  registry.setContentType(format === 'openmetrics' ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE)
  for (const family of families) {
    const labelNames = [...new Set(family.samples.flatMap((sample) => Object.keys(sample.labels)))]
    if (family.type === 'counter') {
      const counter = new Counter({name: family.name, help: family.help, labelNames, registers: [registry]})
      // A fresh counter per round: inc by the value sets it (the server's counter, or the watch's running sum).
      for (const sample of family.samples) counter.inc(sample.labels, Math.max(0, sample.value))
    } else {
      const gauge = new Gauge({name: family.name, help: family.help, labelNames, registers: [registry]})
      for (const sample of family.samples) gauge.set(sample.labels, sample.value)
    }
  }
  return {contentType: registry.contentType, text: await registry.metrics()}
}
