import type { Answer, Probe } from './http.ts'

/**
 * What the suite holds every answer to, and the failures it found: grouped by operation, status and
 * problem, each with one reproducible example, reported together at the end.
 */

const STABLE_CODE = /^[A-Z][A-Z0-9_]+$/
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** What an answer must never show: stack traces, module and project paths, source positions. */
function leaks(root: string): [RegExp, string][] {
  return [
    [/ {4}at /, 'a stack trace'],
    [/node_modules/, 'node_modules'],
    [/\/work\/|file:\/\//, 'an internal path'],
    [new RegExp(escape(root)), 'the project path'],
    [/\.ts:/, 'a source file position'],
  ]
}

/** The problems of one answer (none when it is right). */
export function problemsOf(probe: Probe, answer: Answer, leaks: [RegExp, string][]): string[] {
  const problems: string[] = []
  if (answer.status >= 500 || answer.status < 100) problems.push(`answered ${answer.status || 'without a status'}`)
  if (answer.status >= 400) {
    const charged = answer.headers['x-access-units-charged']
    if (charged !== '0') problems.push(charged === undefined ? 'no x-access-units-charged header' : `x-access-units-charged: ${charged} on an error`)
  }
  if (answer.status >= 400 && answer.status < 500) {
    const shape = errorShapeProblem(answer.body)
    if (shape) problems.push(shape)
  }
  const sent = `${probe.target} ${probe.body ?? ''} ${probe.raw ?? ''}`
  for (const [pattern, what] of leaks) if (pattern.test(answer.body) && !pattern.test(sent)) problems.push(`the body shows ${what}`)
  const own = probe.expect?.(answer)
  if (own) problems.push(own)
  return problems
}

function errorShapeProblem(body: string): string | undefined {
  let parsed: any
  try {
    parsed = JSON.parse(body)
  } catch {
    return body ? 'the error body is not JSON' : 'the error body is empty'
  }
  const error = parsed?.error
  if (typeof error?.code !== 'string' || typeof error?.message !== 'string') return 'the error body is not { error: { code, message } }'
  if (!STABLE_CODE.test(error.code) || /^(ERR_|SQLITE)/.test(error.code)) return `error code '${error.code}' is not a stable code`
  return undefined
}

interface Group {
  title: string
  count: number
  probe: Probe
  detail: string
  /** The operations, entity sets or routes it happened on. */
  where: Set<string>
}

/** The case without the operation it was sent to (`body null`, `$top=-1`, `random read`). */
const caseOf = (probe: Probe) => (probe.name.startsWith(`${probe.group}: `) ? probe.name.slice(probe.group.length + 2) : probe.name)

/** The error code of an answer, which tells causes apart. */
function codeOf(answer: Answer): string {
  try {
    return String(JSON.parse(answer.body)?.error?.code ?? '')
  } catch {
    return ''
  }
}

export class Findings {
  private readonly leaks: [RegExp, string][]
  private readonly groups = new Map<string, Group>()
  private readonly skipped = new Map<string, number>()
  readonly notes: string[] = []

  /** `root`: the project's directory, which no answer may show. */
  constructor(root: string) {
    this.leaks = leaks(root)
  }

  /** Checks an answer; false when it had problems. `serverLog`: what the server wrote lately, where a 5xx finds its cause. */
  check(probe: Probe, answer: Answer, serverLog?: () => string): boolean {
    const problems = problemsOf(probe, answer, this.leaks)
    if (problems.length) {
      const code = codeOf(answer)
      const cause = answer.status >= 500 && serverLog ? serverLinesOf(answer, serverLog()) : ''
      this.add(probe, `${answer.status}${code ? ` ${code}` : ''}: ${problems.join('; ')}`, `answer: ${answerExcerpt(answer)}${cause ? `\n     server log: ${cause}` : ''}`)
    }
    return problems.length === 0
  }

  /** Counts a failure under its case, title and cause, keeping the first example. */
  add(probe: Probe, title: string, detail: string, cause = '') {
    const key = `${caseOf(probe)}\u0000${title}\u0000${cause}`
    const group = this.groups.get(key)
    if (group) {
      group.count++
      group.where.add(probe.group)
    } else this.groups.set(key, { title, count: 1, probe, detail, where: new Set([probe.group]) })
  }

  /** The process died: after this request (when known), else with `inFlight` requests in flight. */
  crash(probe: Probe, log: string, note = '', inFlight: Probe[] = []) {
    const title = inFlight.length ? `the server process exited with ${inFlight.length} requests in flight` : 'the server process exited after this request'
    const flight = inFlight.length ? `; in flight: ${inFlight.map(probe => requestExcerpt(probe)).join(' | ').slice(0, 1500)}` : ''
    this.add(probe, title, `server log: ${log}${note ? ` (${note})` : ''}${flight}`, log)
  }

  skip(reason: string) {
    this.skipped.set(reason, (this.skipped.get(reason) ?? 0) + 1)
  }

  get count() {
    return this.groups.size
  }

  /** Every failure, grouped, with one example each (at most `limit` groups written out). */
  report(limit = 30): string {
    const groups = [...this.groups.values()]
    const lines = [`${groups.length} distinct failure(s):`]
    for (const [index, group] of groups.slice(0, limit).entries()) {
      const where = [...group.where]
      const on = where.length > 1 ? `${where.length} targets (${where.slice(0, 4).join(', ')}${where.length > 4 ? ', …' : ''})` : where[0]
      lines.push(`${index + 1}. ${caseOf(group.probe)} on ${on} — ${group.title}${group.count > 1 ? ` (${group.count}×)` : ''}`)
      // A crash or a 5xx is the server's fault, not the input's shape: the whole request, to replay it.
      const whole = group.title.startsWith('the server process exited') || /^5\d\d/.test(group.title)
      lines.push(`     request: ${requestExcerpt(group.probe, whole ? 4000 : 240)}${group.probe.kinds.length ? ` [${group.probe.kinds.join(', ')}]` : ''}`)
      lines.push(`     ${group.detail}`)
    }
    if (groups.length > limit) lines.push(`… and ${groups.length - limit} more`)
    const skipped = [...this.skipped]
    if (skipped.length) lines.push('not run (after a crash, or with no restarts left):', ...skipped.slice(0, 10).map(([reason, n]) => `  ${n}× ${reason}`), ...(skipped.length > 10 ? [`  … and ${skipped.length - 10} more`] : []))
    if (this.notes.length) lines.push('notes:', ...this.notes.map(note => `  ${note}`))
    return lines.join('\n')
  }
}

export const excerpt = (text: string, max: number) => {
  const shown = JSON.stringify(text.length > max ? text.slice(0, max) : text).slice(1, -1)
  return text.length > max ? `${shown}… (${text.length} chars)` : shown
}

/** Method, target, headers and body of a request, each cut at `max` characters (raw bytes, headers and body at less). */
export function requestExcerpt(probe: Probe, max = 240): string {
  if (probe.raw !== undefined) return `raw bytes "${excerpt(probe.raw, 160)}"`
  const headers = Object.entries(probe.headers ?? {}).filter(([name]) => name !== 'content-type' || !/json/.test(probe.headers![name]))
  return [
    `${probe.method} ${excerpt(probe.target, max)}`,
    probe.anonymous ? '(no key)' : '',
    headers.length ? `headers ${headers.map(([n, v]) => `${n}: ${excerpt(v, 60)}`).join('; ')}` : '',
    probe.body !== undefined ? `body ${excerpt(probe.body, max - 40)}` : '',
  ].filter(Boolean).join(' ')
}

/** The server's error log of the answer's request id (its message and stack), when the answer names one. */
function serverLinesOf(answer: Answer, log: string): string {
  const requestId = /request id ([0-9a-f-]{36})/.exec(answer.body)?.[1]
  if (!requestId) return ''
  const lines = log.split('\n')
  const at = lines.findIndex(line => line.includes(requestId) && !line.startsWith('{"type":"access"'))
  return at < 0 ? '' : lines.slice(at, at + 12).join('\n       ').slice(0, 2000)
}

export const answerExcerpt = (answer: Answer) => `${answer.status} ${excerpt(answer.body, 300)}`
