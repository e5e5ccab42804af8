import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

/**
 * Requests are parsed in the services; the chain-B connector takes and returns typed values. No
 * file under srv/chains/chain-b raises a 400 (badInput) or names a request parameter (the
 * `...Json` parameters, circuitId): its own errors say what is wrong with a value, and the services
 * (with srv/chainb-params, which both chain-B services share) turn that into the caller's 400.
 */

const root = resolve(__dirname, '..', '..')
const connector = join(root, 'srv', 'chains', 'chain-b')

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return name.endsWith('.ts') ? [path] : []
  })
}

/** The lines of a source that parse a request: a 400 raised with badInput, or a request parameter's name in a string. */
function requestParsingLines(source: string): string[] {
  return source.split('\n').filter(line => /\bbadInput\(/.test(line) || /['"`][^'"`]*\b(?:[a-z][a-zA-Z]*Json|circuitId)\b[^'"`]*['"`]/.test(line))
}

test('the chain-B connector parses no request', () => {
  const found = sources(connector).flatMap(file => requestParsingLines(readFileSync(file, 'utf8')).map(line => `${relative(root, file)}: ${line.trim()}`))
  expect(found).toEqual([])
})

test('the check finds a 400 and a parameter name, and passes typed code', () => {
  expect(requestParsingLines("  throw badInput('INVALID_SET', 'x', 'allowedValuesJson')")).toHaveLength(1)
  expect(requestParsingLines('  if (!ok) throw new Error(`proofFieldsJson must be an array`)')).toHaveLength(1)
  expect(requestParsingLines("  return { problem: { code: 'UNKNOWN_CIRCUIT', part: 'circuit' } }")).toEqual([])
  expect(requestParsingLines('  const text = canonicalJson(document)')).toEqual([])
})
