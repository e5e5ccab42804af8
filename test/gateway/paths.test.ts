import { normaliseTarget } from '../../srv/gateway/paths.ts'

const ok = (target: string, path: string, query = '') => expect(normaliseTarget(target, {})).toEqual({ ok: true, path, query })
const refused = (target: string, code: string, headers: Record<string, string> = {}) =>
  expect(normaliseTarget(target, headers)).toMatchObject({ ok: false, status: 400, code })

describe('normaliseTarget accepts plain OData targets unchanged', () => {
  test('entity set with query options', () => ok('/odata/v4/chaina-odata/Blocks?$top=1&$filter=epoch%20eq%200', '/odata/v4/chaina-odata/Blocks', '$top=1&$filter=epoch%20eq%200'))
  test('key predicate with an encoded quote', () => ok(`/odata/v4/chaina-odata/Transactions(%27${'ab'.repeat(32)}%27)`, `/odata/v4/chaina-odata/Transactions('${'ab'.repeat(32)}')`))
  test('function with parameters in the path', () => ok("/odata/v4/analytics/compare(metric='tx.count',window='24h')", "/odata/v4/analytics/compare(metric='tx.count',window='24h')"))
  test('service root with a trailing slash', () => ok('/odata/v4/chaina-odata/', '/odata/v4/chaina-odata/'))
})

describe('normaliseTarget refuses every ambiguity (400)', () => {
  test.each([
    ['dot segment', '/odata/v4/chaina-odata/../admin'],
    ['single dot segment', '/odata/v4/./chaina-odata/Blocks'],
    ['percent-encoded dots', '/odata/v4/chaina-odata/%2e%2e/admin'],
    ['upper-case encoded dots', '/odata/v4/chaina-odata/%2E%2E/admin'],
    ['mixed encoded dot', '/odata/v4/chaina-odata/.%2e/admin'],
    ['double-encoded dots', '/odata/v4/chaina-odata/%252e%252e/admin'],
    ['encoded slash', '/odata/v4%2fchaina-odata/Blocks'],
    ['encoded backslash', '/odata/v4/chaina-odata%5c..%5cadmin'],
    ['backslash', '/odata\\v4\\chaina-odata/Blocks'],
    ['duplicate slash', '/odata//v4/chaina-odata/Blocks'],
    ['leading duplicate slash', '//odata/v4/chaina-odata/Blocks'],
    ['trailing dot', '/odata/v4/chaina-odata./Blocks'],
    ['encoded space', '/odata/v4/chaina-odata/Blocks%20'],
    ['encoded tab', '/odata/v4/chaina-odata/Blocks%09'],
    ['encoded NUL', '/odata/v4/chaina-odata/Blocks%00'],
    ['matrix parameter', '/odata/v4/chaina-odata;jsessionid=1/Blocks'],
    ['Tomcat dot-dot-semicolon', '/odata/v4/chaina-odata/..;/admin'],
    ['encoded question mark', '/odata/v4/chaina-odata/Blocks%3f$top=1'],
    ['encoded hash', '/odata/v4/chaina-odata/Blocks%23x'],
    ['fragment', '/odata/v4/chaina-odata/Blocks#x'],
  ])('%s', (_name, target) => refused(target, 'AMBIGUOUS_PATH'))

  test.each([
    ['overlong UTF-8 dot', '/odata/v4/chaina-odata/%c0%ae%c0%ae/admin'],
    ['truncated escape', '/odata/v4/chaina-odata/%e2%82'],
  ])('%s is malformed', (_name, target) => refused(target, 'MALFORMED_PATH'))

  test.each([
    ['fullwidth full stop', '/odata/v4/chaina-odata/%EF%BC%8E%EF%BC%8E/admin'],
    ['fullwidth solidus', '/odata/v4/chaina-odata%EF%BC%8Fadmin'],
  ])('%s is outside printable ASCII', (_name, target) => refused(target, 'AMBIGUOUS_PATH'))

  test.each(['http://evil.example/odata/v4/chaina-odata/Blocks', '*', 'odata/v4/chaina-odata/Blocks'])('absolute or asterisk form %s', target =>
    refused(target, 'ABSOLUTE_TARGET_REFUSED'))

  test.each(['x-http-method-override', 'x-http-method', 'x-method-override', 'x-original-url', 'x-rewrite-url', 'x-forwarded-path'])('rewrite header %s', header =>
    refused('/odata/v4/chaina-odata/Blocks', 'REWRITE_HEADER_REFUSED', { [header]: '/admin' }))
})
