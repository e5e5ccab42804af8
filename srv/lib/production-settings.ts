import { isProduction } from './settings.ts'

/**
 * The production start's check of its settings: each owner of settings contributes a check that
 * names what is missing or invalid (one line per problem, the setting first, never a secret's
 * value); the bootstrap runs them all before serving, and with any problem the process ends with
 * one message listing every one, without a stack.
 */

/** One owner's problems with its production settings; none is an empty list. */
export type ProductionCheck = () => string[]

export class ProductionSettingsError extends Error {
  readonly problems: string[]
  constructor(problems: string[]) {
    super(`Refusing to start in production: ${problems.length} setting${problems.length === 1 ? ' is' : 's are'} missing or invalid:\n${problems.map(problem => `  - ${problem}`).join('\n')}`)
    this.problems = problems
  }
}

/** Every check's problems; a check that fails names its failure as a problem. */
export function productionProblems(checks: readonly ProductionCheck[]): string[] {
  return checks.flatMap(check => {
    try {
      return check()
    } catch (error) {
      return [error instanceof Error ? error.message : String(error)]
    }
  })
}

/**
 * In production, ends the process with one message listing every problem (exit code 1, no stack);
 * under jest it throws instead. Elsewhere it does nothing.
 */
export function refuseToStartOnProblems(checks: readonly ProductionCheck[]): void {
  if (!isProduction()) return
  const problems = productionProblems(checks)
  if (!problems.length) return
  const error = new ProductionSettingsError(problems)
  if (typeof (globalThis as { test?: unknown }).test === 'function') throw error
  console.error(error.message)
  process.exit(1)
}

/** The least length of a production secret. */
export const MIN_SECRET_LENGTH = 32
/** The least number of different characters in a production secret (a repeated or counted pattern has fewer). */
const MIN_DISTINCT_CHARACTERS = 10

/** What is wrong with a production secret: missing, too short or too uniform; never its value. */
export function secretProblem(variable: string, value: string | undefined, purpose: string): string | undefined {
  if (value === undefined || value === '') return `${variable} is not set: ${purpose}`
  if (value.length < MIN_SECRET_LENGTH) return `${variable} is too weak: ${value.length} characters, at least ${MIN_SECRET_LENGTH} needed (e.g. openssl rand -hex 32)`
  const distinct = new Set(value).size
  if (distinct < MIN_DISTINCT_CHARACTERS) return `${variable} is too weak: only ${distinct} different characters, at least ${MIN_DISTINCT_CHARACTERS} needed (e.g. openssl rand -hex 32)`
  return undefined
}

/** What is wrong with a configured URL (its value is named only when it carries no user information). */
export function urlProblem(variable: string, value: string, protocols: readonly string[] = ['http:', 'https:']): string | undefined {
  let url: URL | undefined
  try {
    url = new URL(value)
  } catch {
    url = undefined
  }
  if (url && protocols.includes(url.protocol)) return undefined
  const shown = url?.username || url?.password || value.includes('@') ? 'its value' : `'${value.slice(0, 200)}'`
  return `${variable} must be a ${protocols.map(protocol => protocol.replace(':', '')).join(' or ')} URL, got ${shown}`
}
