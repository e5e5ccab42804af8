import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CIRCUIT_IDS, readManifest } from '../../../srv/chains/chain-b/zk/circuits.ts'
import { prepareDocument } from '../../../srv/chains/chain-b/zk/content.ts'
import { fieldOfHex } from '../../../srv/chains/chain-b/zk/field.ts'
import { ProverPool, WitnessError } from '../../../srv/chains/chain-b/zk/prover.ts'
import { verifyProof } from '../../../srv/chains/chain-b/zk/verifier.ts'

/**
 * The committed keys belong to the circuits as they are in zk/circuits (a changed circuit without
 * new keys fails here), and the prover pool: proofs made in its threads verify, a false statement
 * is refused by the witness generator, and the pool never runs more proofs at once than it has threads.
 */

const ROOT = join(__dirname, '..', '..', '..')
const KEYS = join(ROOT, 'zk', 'keys')
const sha256 = (...parts: Buffer[]) => parts.reduce((hash, part) => hash.update(part), createHash('sha256')).digest('hex')

test('the committed keys were made from the circuits in zk/circuits, and their files are the ones the manifest names', () => {
  const manifest = readManifest(KEYS)
  const library = readFileSync(join(ROOT, 'zk', 'circuits', 'content.circom'))
  expect(Object.keys(manifest.circuits).sort()).toEqual([...CIRCUIT_IDS].sort())
  for (const id of CIRCUIT_IDS) {
    const entry = manifest.circuits[id]
    expect({ id, source: entry.source }).toEqual({ id, source: sha256(readFileSync(join(ROOT, 'zk', 'circuits', `${id}.circom`)), library) })
    for (const file of Object.values(entry.files)) expect({ file: file.name, sha256: sha256(readFileSync(join(KEYS, id, file.name))) }).toEqual({ file: file.name, sha256: file.sha256 })
  }
})

describe('the prover pool', () => {
  const pool = new ProverPool(KEYS, 1)
  afterAll(() => pool.close())

  const document = prepareDocument({ country: 'DE' }, [{ field: 'country' }], '33'.repeat(32))
  const field = document.fields[0]
  const equalityInput = (expected: string) => ({
    payload: String(fieldOfHex(document.payloadHash)), root: String(BigInt('0x' + document.contentRoot)), attester: '7', fieldKey: String(BigInt('0x' + field.fieldKey)),
    expected, salt: String(BigInt('0x' + field.salt)), siblings: field.siblings.map(s => String(BigInt('0x' + s))), dirs: field.dirs.map(d => (d ? '1' : '0')),
  })

  test('queues what it cannot prove at once, proves each in turn, and the proofs verify', async () => {
    const proofs = [1, 2, 3].map(() => pool.prove('field_equality', equalityInput(String(fieldOfHex(field.valueDigest!)))))
    expect(pool.load).toBe(3)
    const proven = await Promise.all(proofs)
    expect(pool.load).toBe(0)
    for (const claim of proven) expect(await verifyProof(KEYS, { circuit: 'field_equality', ...claim })).toBe(true)
    expect(new Set(proven.map(claim => claim.proof.pi_a[0])).size).toBe(3)
  })

  test('a statement that is false is refused by the witness generator, and the pool goes on', async () => {
    await expect(pool.prove('field_equality', equalityInput('12345'))).rejects.toBeInstanceOf(WitnessError)
    const next = await pool.prove('field_equality', equalityInput(String(fieldOfHex(field.valueDigest!))))
    expect(await verifyProof(KEYS, { circuit: 'field_equality', ...next })).toBe(true)
  })
})
