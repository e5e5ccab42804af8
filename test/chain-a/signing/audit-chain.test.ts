import { createHash } from 'node:crypto'
import {
  appendAuditEntry, AUDIT_GENESIS_HASH, auditEntryHash, canonicalAuditEvent, verifyChain, type AuditEntry, type AuditEvent,
} from '../../../srv/chains/chain-a/signing/audit-chain.ts'
import { errorCode } from './support.ts'

const REQUEST = '6f1c2a4e-0000-4000-8000-000000000001'

/** A signing request's life: created, refused once by a policy, then signed, verified and submitted. */
function lifecycle(): AuditEntry[] {
  const events: Omit<AuditEvent, 'sequence'>[] = [
    { at: '2026-11-22T10:00:00Z', kind: 'created', signingRequestId: REQUEST, actor: 'alice', details: { buildId: 'b-1', expiresAt: '2026-11-22T10:30:00.000Z' } },
    { at: '2026-11-22T10:01:00Z', kind: 'policy-refused', signingRequestId: REQUEST, actor: 'bob', details: { policy: 'treasury', rule: 'allowedSignerTypes' } },
    { at: '2026-11-22T10:02:00Z', kind: 'signed', signingRequestId: REQUEST, actor: 'alice', details: { signerType: 'browser-wallet', witnesses: 1 } },
    { at: '2026-11-22T10:02:01Z', kind: 'verified', signingRequestId: REQUEST, actor: 'system', details: { valid: true, signerKeyHashes: ['ab'.repeat(28)] } },
    { at: '2026-11-22T10:02:02Z', kind: 'submitted', signingRequestId: REQUEST, actor: 'system', details: { txHash: 'cd'.repeat(32) } },
  ]
  const entries: AuditEntry[] = []
  for (const event of events) entries.push(appendAuditEntry(entries.at(-1), event))
  return entries
}

describe('chaining audit entries', () => {
  test('entries are numbered from 1, the first chains to the genesis value, each to the one before', () => {
    const entries = lifecycle()
    expect(entries.map(e => e.sequence)).toEqual([1, 2, 3, 4, 5])
    expect(entries[0].previousHash).toBe(AUDIT_GENESIS_HASH)
    for (let i = 1; i < entries.length; i++) expect(entries[i].previousHash).toBe(entries[i - 1].hash)
    for (const entry of entries) expect(entry.hash).toMatch(/^[0-9a-f]{64}$/)
    expect(verifyChain(entries)).toEqual({ valid: true })
    expect(verifyChain([])).toEqual({ valid: true })
  })

  test('the hash is sha256 over the canonical serialisation, which sorts keys and normalises the time', () => {
    const event: AuditEvent = { sequence: 1, at: '2026-11-22T10:00:00Z', kind: 'created', signingRequestId: REQUEST, actor: 'alice', details: { b: [1, 'x'], a: { d: null, c: true } } }
    const canonical = canonicalAuditEvent(event, AUDIT_GENESIS_HASH)
    expect(canonical).toBe(
      `{"actor":"alice","at":"2026-11-22T10:00:00.000Z","details":{"a":{"c":true,"d":null},"b":[1,"x"]},"kind":"created",` +
      `"previousHash":"${AUDIT_GENESIS_HASH}","sequence":1,"signingRequestId":"${REQUEST}"}`)
    expect(auditEntryHash(event, AUDIT_GENESIS_HASH)).toBe(createHash('sha256').update(canonical).digest('hex'))

    const reordered: AuditEvent = { ...event, at: new Date('2026-11-22T10:00:00.000Z'), details: { a: { c: true, d: null }, b: [1, 'x'] } }
    expect(auditEntryHash(reordered, AUDIT_GENESIS_HASH)).toBe(auditEntryHash(event, AUDIT_GENESIS_HASH))
  })

  test('events that cannot be serialised canonically are refused', async () => {
    const base = { at: '2026-11-22T10:00:00Z', signingRequestId: REQUEST, actor: 'alice', details: {} }
    expect(await errorCode(() => appendAuditEntry(undefined, { ...base, kind: 'approved' as never }))).toBe('INVALID_AUDIT_EVENT')
    expect(await errorCode(() => appendAuditEntry(undefined, { ...base, kind: 'created', at: 'yesterday' }))).toBe('INVALID_AUDIT_EVENT')
    expect(await errorCode(() => appendAuditEntry(undefined, { ...base, kind: 'created', details: { amount: Infinity } }))).toBe('INVALID_AUDIT_EVENT')
  })
})

describe('tampering breaks the chain', () => {
  test('altering an entry\'s details breaks the chain at that entry', () => {
    const entries = lifecycle()
    entries[2] = { ...entries[2], details: { signerType: 'hsm', witnesses: 1 } }
    expect(verifyChain(entries)).toEqual({ valid: false, brokenAt: 3, reason: 'entry 3 was altered: its content does not match its hash' })
  })

  test.each([
    ['actor', { actor: 'mallory' }],
    ['time', { at: '2026-11-22T09:00:00.000Z' }],
    ['kind', { kind: 'cancelled' }],
    ['signing request', { signingRequestId: 'another' }],
  ])('altering the %s breaks the chain at that entry', (_, change) => {
    const entries = lifecycle()
    entries[1] = { ...entries[1], ...change } as AuditEntry
    expect(verifyChain(entries)).toMatchObject({ valid: false, brokenAt: 2 })
  })

  test('re-hashing an altered entry breaks the chain at the next one', () => {
    const entries = lifecycle()
    const forged = { ...entries[1], actor: 'mallory' }
    entries[1] = { ...forged, hash: auditEntryHash(forged, forged.previousHash) }
    expect(verifyChain(entries)).toEqual({ valid: false, brokenAt: 3, reason: 'entry 3 does not chain to the hash of entry 2' })
  })

  test('removing or reordering entries breaks the chain', () => {
    const removed = lifecycle()
    removed.splice(3, 1)
    expect(verifyChain(removed)).toMatchObject({ valid: false, brokenAt: 5, reason: 'sequence 5 follows 3: an entry is missing or out of order' })

    const [first, second, ...rest] = lifecycle()
    expect(verifyChain([second, first, ...rest])).toMatchObject({ valid: false, brokenAt: 2 })
    expect(verifyChain(lifecycle().slice(1))).toMatchObject({ valid: false, brokenAt: 2 })
  })

  test('an unknown kind in a stored entry breaks the chain there', () => {
    const entries = lifecycle()
    entries[3] = { ...entries[3], kind: 'approved' as never }
    expect(verifyChain(entries)).toEqual({ valid: false, brokenAt: 4, reason: "'approved' is not an audit event kind" })
  })
})
