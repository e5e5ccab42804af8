/** Reading /metrics in tests: a scrape with the token, and the samples of Prometheus's text format. */

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface Scrape {
  status: number
  contentType: string | null
  text: string
  samples: Sample[]
}

export async function scrape(baseUrl: string, token: string): Promise<Scrape> {
  const response = await fetch(baseUrl + '/metrics', { headers: { authorization: `Bearer ${token}` } })
  const text = await response.text()
  return { status: response.status, contentType: response.headers.get('content-type'), text, samples: parseSamples(text) }
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g

/** The sample lines of the text format (comments left out). */
export function parseSamples(text: string): Sample[] {
  return text.split('\n').flatMap(line => {
    const match = SAMPLE.exec(line)
    if (!match) return []
    const labels: Record<string, string> = {}
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name] = value
    return [{ name: match[1], labels, value: Number(match[3]) }]
  })
}

/** The sum of the samples of a metric whose labels include `labels` (0 when there is none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter(sample => sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value))
    .reduce((sum, sample) => sum + sample.value, 0)
}

export const has = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.some(sample => sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value))

/** Scrapes until `check` holds (the counters of an answer are recorded as it finishes), or fails with the last scrape. */
export async function scrapeUntil(baseUrl: string, token: string, check: (samples: Sample[]) => boolean, timeoutMs = 30_000): Promise<Sample[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { samples, text } = await scrape(baseUrl, token)
    if (check(samples)) return samples
    if (Date.now() > deadline) throw new Error(`/metrics never showed what was expected; last scrape:\n${text.slice(0, 20_000)}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}
