import { shadowingProperty } from '../../srv/lib/shadowing-properties.ts'

test.each([
  [{ hash: { toString: 1 } }, 'hash.toString'],
  [{ a: [1, { b: [{ valueOf: 2 }] }] }, 'a[1].b[0].valueOf'],
  [JSON.parse('{"__proto__": {"x": 1}}'), '__proto__'],
  [[{ constructor: {} }], '[0].constructor'],
])('%j names %s', (value, path) => {
  expect(shadowingProperty(value)).toBe(path)
})

test('ordinary bodies, texts and numbers have none', () => {
  expect(shadowingProperty({ hash: 'toString', list: ['constructor'], n: 1, nested: { deeper: [null, true] } })).toBeUndefined()
  expect(shadowingProperty('toString')).toBeUndefined()
  expect(shadowingProperty(null)).toBeUndefined()
})

test('a body nested deeper than the call stack is walked without overflowing it', () => {
  const deep = JSON.parse('['.repeat(200_000) + '{"toString": 1}' + ']'.repeat(200_000))
  expect(shadowingProperty(deep)).toMatch(/^….{90,}\.toString$/)
  expect(shadowingProperty(JSON.parse('['.repeat(200_000) + ']'.repeat(200_000)))).toBeUndefined()
})
