/** Latency sampling and the figures the benchmarks print. */

export interface Figures {
  p50: number
  p99: number
  mean: number
}

export async function sample(rounds: number, once: () => Promise<unknown>): Promise<Figures> {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await once()
    times.push(performance.now() - started)
  }
  return figures(times)
}

export function figures(times: number[]): Figures {
  const sorted = [...times].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return { p50: at(0.5), p99: at(0.99), mean: sorted.reduce((sum, t) => sum + t, 0) / sorted.length }
}

const ms = (value: number) => `${value.toFixed(2)} ms`

export function printLine(label: string, f: Figures) {
  console.log(`  ${label.padEnd(58)} p50 ${ms(f.p50).padStart(10)}   p99 ${ms(f.p99).padStart(10)}`)
}

export function printRatio(label: string, measured: Figures, baseline: Figures) {
  console.log(`  ${label.padEnd(58)} p50 ${(measured.p50 / baseline.p50).toFixed(2).padStart(7)}x     p99 ${(measured.p99 / baseline.p99).toFixed(2).padStart(7)}x`)
}

export function printValue(label: string, value: string) {
  console.log(`  ${label.padEnd(58)} ${value}`)
}
