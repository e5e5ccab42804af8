import { stableErrorCodes } from '../../srv/lib/error-codes.ts'

const classify = (error: any, originalUrl = '/odata/v4/x/Blocks') => {
  let passed: any
  stableErrorCodes(error, { originalUrl }, undefined, (e: unknown) => (passed = e))
  return passed
}

test('codes our handlers set are kept', () => {
  expect(classify({ status: 400, code: 'INVALID_TX_HASH', message: 'x' }).code).toBe('INVALID_TX_HASH')
})

test('a unique-constraint race in the database answers 409 CONFLICT, not a 5xx', () => {
  expect(classify({ status: 500, code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed' })).toMatchObject({ status: 409, code: 'CONFLICT' })
  expect(classify({ status: 500, code: '500', sqlState: '23505', message: 'duplicate key value' })).toMatchObject({ status: 409, code: 'CONFLICT' })
})

test('every constraint violation answers 409 CONFLICT, whichever database or layer reports it, also when another error wraps it', () => {
  const violations: [string, object][] = [
    ['node:sqlite, a unique key', { code: 'ERR_SQLITE_ERROR', errcode: 2067, errstr: 'constraint failed', message: 'UNIQUE constraint failed: chainasign_VerifiedTransactions.txHash' }],
    ['node:sqlite, a primary key', { code: 'ERR_SQLITE_ERROR', errcode: 1555, message: 'UNIQUE constraint failed: chainatx_SpendLocks.owner' }],
    ['node:sqlite, by its result code alone', { code: 'ERR_SQLITE_ERROR', errcode: 787, message: 'constraint violation' }],
    ['node:sqlite, not null (as the SQLite service names it)', { code: 'SQLITE_CONSTRAINT_NOTNULL', message: 'NOT NULL constraint failed: chainasign_VerifiedTransactions.txHash' }],
    ['PostgreSQL, a unique key', { code: '23505', severity: 'ERROR', message: 'duplicate key value violates unique constraint "chainasign_verifiedtransactions_transaction"' }],
    ['PostgreSQL, a foreign key', { code: '23503', severity: 'ERROR', message: 'insert or update violates foreign key constraint' }],
    ['PostgreSQL, a check', { code: '23514', severity: 'ERROR', message: 'new row violates check constraint' }],
    ['CAP\'s names for it', { status: 400, code: 'UNIQUE_CONSTRAINT_VIOLATION', message: 'UNIQUE_CONSTRAINT_VIOLATION' }],
    ['CAP\'s names for it', { status: 400, code: 'ENTITY_ALREADY_EXISTS', message: 'ENTITY_ALREADY_EXISTS' }],
    ['wrapped', { status: 500, message: 'could not append', cause: { code: '23505', severity: 'ERROR', message: 'duplicate key value' } }],
  ]
  for (const [what, error] of violations) expect([what, classify(error)]).toEqual([what, expect.objectContaining({ status: 409, code: 'CONFLICT' })])
})

test('framework errors get codes from their status and message', () => {
  expect(classify({ status: 400, code: '400', message: 'Property "x" does not exist in "S.Blocks"' }).code).toBe('UNKNOWN_PROPERTY')
  expect(classify({ status: 404, code: '404', message: 'Invalid resource path "S.Nope"' }).code).toBe('UNKNOWN_RESOURCE')
  expect(classify({ status: 500, code: undefined, message: 'boom' }).code).toBe('INTERNAL_ERROR')
})

test('a URL parse failure is named after the query option that holds the position', () => {
  const url = '/odata/v4/x/Blocks?$top=1&$filter=height eq'
  expect(classify({ status: 400, code: '400', message: `Parsing URL failed at position ${url.length}: Expected a whitespace` }, url).code).toBe('INVALID_FILTER')
  expect(classify({ status: 400, code: '400', message: 'Parsing URL failed at position 25: Expected an integer' }, '/odata/v4/x/Blocks?$top=a').code).toBe('INVALID_TOP')
})

test('database errors never show through: constraint races are 409, values the database refuses are 400', () => {
  expect(classify({ code: 'ERR_SQLITE_ERROR', errcode: 2067, message: 'UNIQUE constraint failed: chainasign_VerifiedTransactions.txHash' })).toMatchObject({ status: 409, code: 'CONFLICT' })
  expect(classify({ code: 'ERR_SQLITE_ERROR', errcode: 20, message: 'datatype mismatch' })).toMatchObject({ status: 400, code: 'INVALID_VALUE' })
  expect(classify({ code: '22001', severity: 'ERROR', message: 'value too long for type character varying(500)' })).toMatchObject({ status: 400, code: 'INVALID_VALUE' })
  expect(classify({ code: '22021', severity: 'ERROR', message: 'invalid byte sequence for encoding "UTF8": 0x00' })).toMatchObject({ status: 400, code: 'INVALID_VALUE' })
})

test('an unexpected failure answers 500 INTERNAL_ERROR with the request id, never its message, and is no longer a system error', () => {
  const answer = classify(new TypeError("Cannot read properties of undefined (reading 'hash')"))
  expect(answer).toMatchObject({ status: 500, code: 'INTERNAL_ERROR', message: expect.stringContaining('request id') })
  expect(answer.message).not.toContain('hash')
  expect(answer).not.toBeInstanceOf(TypeError)
  expect(answer.name).not.toBe('TypeError')
})

test('what the OData adapter does not implement is the caller\'s request: 406 for $format, 400 otherwise', () => {
  expect(classify({ status: 501, message: 'Only query parameter "json" is allowed in "$format".' })).toMatchObject({ status: 406, code: 'UNSUPPORTED_FORMAT' })
  expect(classify({ status: 501, message: 'Feature is not supported' })).toMatchObject({ status: 400, code: 'NOT_SUPPORTED' })
})

test('CAP\'s missing-parameter check answers MISSING_PARAMETER; a body that is not an object INVALID_BODY', () => {
  expect(classify({ status: 400, code: 'ASSERT_MANDATORY', message: 'Provide the missing value.', target: 'buildId' })).toMatchObject({ code: 'MISSING_PARAMETER', message: 'buildId is required' })
  const withBody = (body: unknown, error: any) => {
    let passed: any
    stableErrorCodes(error, { method: 'POST', originalUrl: '/odata/v4/x/Action', body }, undefined, (e: unknown) => (passed = e))
    return passed.code
  }
  expect(withBody('x', { status: 400, code: 'ASSERT_DATA_TYPE', message: 'Value x is not a valid undefined', target: '' })).toBe('INVALID_BODY')
  expect(withBody(null, { status: 400, code: 'ASSERT_MANDATORY', message: 'Provide the missing value.', target: 'buildId' })).toBe('INVALID_BODY')
  expect(withBody([], { status: 400, code: 'MULTIPLE_ERRORS', message: 'Multiple errors occurred' })).toBe('INVALID_BODY')
  expect(withBody({}, { status: 400, code: 'ASSERT_MANDATORY', message: 'Provide the missing value.', target: 'buildId' })).toBe('MISSING_PARAMETER')
})

test('a read whose own expression the database cannot type is 400 INVALID_QUERY; the same failure elsewhere stays unexpected', () => {
  const failure = { code: '42883', severity: 'ERROR', message: 'function pg_catalog.extract(unknown, character varying) does not exist' }
  const withMethod = (method: string) => {
    let passed: any
    stableErrorCodes({ ...failure }, { method, originalUrl: '/odata/v4/x/Blocks?$filter=year(hash) eq 1' }, undefined, (e: unknown) => (passed = e))
    return [passed.status, passed.code]
  }
  expect(withMethod('GET')).toEqual([400, 'INVALID_QUERY'])
  expect(withMethod('POST')).toEqual([500, 'INTERNAL_ERROR'])
})

test('a statement PostgreSQL stopped at the request\'s deadline answers 503 QUERY_TIMEOUT, not a 5xx without a code', () => {
  expect(classify({ code: '57014', severity: 'ERROR', message: 'canceling statement due to statement timeout' })).toMatchObject({ status: 503, code: 'QUERY_TIMEOUT' })
})

test('the database away answers 503 DATABASE_UNAVAILABLE, its pool exhausted 503 DATABASE_BUSY, each with Retry-After; never a 500', () => {
  const away: [string, object][] = [
    ['a dead pooled client', new Error('Client has encountered a connection error and is not queryable')],
    ['a connection cut', new Error('Connection terminated unexpectedly')],
    ['refused by the server', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a backend terminated', { code: '57P01', severity: 'FATAL', message: 'terminating connection due to administrator command' }],
    ['the server starting', { code: '57P03', severity: 'FATAL', message: 'the database system is starting up' }],
    ['a connection exception', { code: '08006', severity: 'FATAL', message: 'connection failure' }],
    ['connections not allowed', { code: '55000', severity: 'FATAL', message: 'database "x" is not currently accepting connections' }],
    ['wrapped', { status: 500, message: 'could not reserve', cause: { code: 'ECONNRESET', message: 'read ECONNRESET' } }],
  ]
  for (const [what, error] of away) expect([what, classify(error)]).toEqual([what, expect.objectContaining({ status: 503, code: 'DATABASE_UNAVAILABLE', retryAfter: 2 })])
  const busy = [
    new Error('Pool resource could not be acquired within 1s'),
    Object.assign(new Error('ResourceRequest timed out'), { name: 'TimeoutError' }),
    // node:sqlite, another process holding the file's lock past the busy time-out
    Object.assign(new Error('database is locked'), { code: 'ERR_SQLITE_ERROR', errcode: 5, errstr: 'database is locked' }),
  ]
  for (const error of busy) expect(classify(error)).toMatchObject({ status: 503, code: 'DATABASE_BUSY', retryAfter: 1 })
})

test('an answer with a retry time says it in Retry-After; 5xx answers of ours are exempt from CAP\'s production sanitising', () => {
  const headers: Record<string, string> = {}
  const res = { headersSent: false, setHeader: (name: string, value: string) => (headers[name] = value) }
  let passed: any
  stableErrorCodes(new Error('Connection terminated unexpectedly'), { originalUrl: '/odata/v4/x/Blocks' }, res, (e: unknown) => (passed = e))
  expect(headers['Retry-After']).toBe('2')
  expect(passed).toMatchObject({ code: 'DATABASE_UNAVAILABLE', $sanitize: false })
  stableErrorCodes({ status: 502, code: 'UPSTREAM_BAD_ANSWER', message: 'socket hang up at 10.0.0.3' }, { originalUrl: '/odata/v4/x/Blocks' }, res, (e: unknown) => (passed = e))
  expect(passed).toMatchObject({ status: 502, code: 'UPSTREAM_BAD_ANSWER', $sanitize: false })
  expect(passed.message).not.toContain('10.0.0.3')
})
