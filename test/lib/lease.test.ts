import { HANDED_BACK, takeoverNote } from '../../srv/lib/lease.ts'

/** What the instance that takes a lease over logs about how it came to it. */

const NOW = Date.parse('2026-11-27T12:00:00Z')

test('a lease nobody held was free', () => {
  expect(takeoverNote(undefined, NOW)).toBe('the lease was free')
  expect(takeoverNote({ leaseOwner: null, leaseExpiresAt: null }, NOW)).toBe('the lease was free')
})

test('a lease read as handed back was handed back', () => {
  expect(takeoverNote({ leaseOwner: 'a', leaseExpiresAt: HANDED_BACK }, NOW)).toBe('taken over from a, which handed it back')
})

test('a lease still running when read, and claimed after, was handed back in between (a claim takes only an ended lease)', () => {
  expect(takeoverNote({ leaseOwner: 'a', leaseExpiresAt: '2026-11-27T12:10:00Z' }, NOW)).toBe('taken over from a, which handed it back')
})

test('a lease that had ended expired', () => {
  expect(takeoverNote({ leaseOwner: 'a', leaseExpiresAt: new Date('2026-11-27T11:59:00Z') }, NOW)).toBe('taken over from a, whose lease expired at 2026-11-27T11:59:00.000Z')
})
