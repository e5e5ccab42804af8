import { stableErrorCodes } from '../../srv/lib/error-codes.ts'

const classify = (error: any, originalUrl = '/odata/v4/x/Blocks') => {
  let passed: any
  stableErrorCodes(error, { originalUrl }, undefined, e => (passed = e))
  return passed
}

test('codes our handlers set are kept', () => {
  expect(classify({ status: 400, code: 'INVALID_TX_HASH', message: 'x' }).code).toBe('INVALID_TX_HASH')
})

test('a unique-constraint race in the database answers 409 CONFLICT, not a 5xx', () => {
  expect(classify({ status: 500, code: 'SQLITE_CONSTRAINT_UNIQUE', message: 'UNIQUE constraint failed' })).toMatchObject({ status: 409, code: 'CONFLICT' })
  expect(classify({ status: 500, code: '500', sqlState: '23505', message: 'duplicate key value' })).toMatchObject({ status: 409, code: 'CONFLICT' })
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
