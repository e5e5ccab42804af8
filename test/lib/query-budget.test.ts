import { queryBudget } from '../../srv/lib/query-budget.ts'

// What one request may cost: each limit from its documented variable, else from the request pipeline's options, else the default.
const DEFAULTS = { rowBudget: 25_000, expandDepth: 3, timeoutMs: 30_000, maxAnswerBytes: 16 * 1024 * 1024 }

test('defaults without variables or options', () => {
  expect(queryBudget({}, {})).toEqual(DEFAULTS)
})

test.each([
  ['QUERY_ROW_BUDGET', 'rowBudget'],
  ['QUERY_EXPAND_DEPTH', 'expandDepth'],
  ['QUERY_TIMEOUT_MS', 'timeoutMs'],
  ['QUERY_MAX_ANSWER_BYTES', 'maxAnswerBytes'],
] as const)('%s sets cds.requires[request-pipeline].%s, and wins over it', (variable, option) => {
  const requires = { 'request-pipeline': { [option]: 7 } }
  expect(queryBudget(requires, {})).toEqual({ ...DEFAULTS, [option]: 7 })
  expect(queryBudget({}, { [variable]: '9' })).toEqual({ ...DEFAULTS, [option]: 9 })
  expect(queryBudget(requires, { [variable]: '9' })).toEqual({ ...DEFAULTS, [option]: 9 })
  expect(() => queryBudget({}, { [variable]: 'many' })).toThrow(`Setting ${variable} must be a number, got 'many'`)
})

test('CAP\'s own variables set the options too', () => {
  expect(queryBudget({ request: { pipeline: { rowBudget: 11 } } }, {})).toMatchObject({ rowBudget: 11 })
})

test('read at each use: a variable set between requests applies to the next', () => {
  const before = queryBudget().rowBudget
  process.env.QUERY_ROW_BUDGET = '12'
  try {
    expect(queryBudget().rowBudget).toBe(12)
  } finally {
    delete process.env.QUERY_ROW_BUDGET
  }
  expect(queryBudget().rowBudget).toBe(before)
})
