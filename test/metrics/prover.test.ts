import { join } from 'node:path'
import { prepareDocument } from '../../srv/chains/chain-b/zk/content.ts'
import { fieldOfHex } from '../../srv/chains/chain-b/zk/field.ts'
import { ProverPool, WitnessError } from '../../srv/chains/chain-b/zk/prover.ts'
import { registry } from '../../srv/metrics/instruments.ts'
import { parseSamples, total } from '../support/metrics.ts'

/** The prover pool's metrics: claims waiting and proving as they move, and each proof's time by circuit and outcome. */

const KEYS = join(__dirname, '..', '..', 'zk', 'keys')
const pool = new ProverPool(KEYS, 1)
afterAll(() => pool.close())

const document = prepareDocument({ country: 'DE' }, [{ field: 'country' }], '33'.repeat(32))
const field = document.fields[0]
const equalityInput = (expected: string) => ({
  payload: String(fieldOfHex(document.payloadHash)), root: String(BigInt('0x' + document.contentRoot)), attester: '7', fieldKey: String(BigInt('0x' + field.fieldKey)),
  expected, salt: String(BigInt('0x' + field.salt)), siblings: field.siblings.map(s => String(BigInt('0x' + s))), dirs: field.dirs.map(d => (d ? '1' : '0')),
})
const trueStatement = () => equalityInput(String(fieldOfHex(field.valueDigest!)))

const samples = async () => parseSamples(await registry.metrics())
const claims = async (state: string) => total(await samples(), 'cag_prover_claims', { state })
const proofs = async (outcome: string) => total(await samples(), 'cag_proof_duration_seconds_count', { circuit: 'field_equality', outcome })

test('claims are counted waiting, then proving, then gone; each proof is timed with its outcome', async () => {
  const proved = await proofs('proved')
  const refused = await proofs('refused')
  const running = [pool.prove('field_equality', trueStatement()), pool.prove('field_equality', trueStatement())]
  const failing = pool.prove('field_equality', equalityInput('12345'))
  expect(await claims('proving')).toBe(1)
  expect(await claims('waiting')).toBe(2)
  await Promise.all(running)
  await expect(failing).rejects.toBeInstanceOf(WitnessError)
  expect(await claims('proving')).toBe(0)
  expect(await claims('waiting')).toBe(0)
  expect(await proofs('proved')).toBe(proved + 2)
  expect(await proofs('refused')).toBe(refused + 1)
})

test('closing the pool takes its claims off the gauges', async () => {
  const other = new ProverPool(KEYS, 1)
  const pending = [other.prove('field_equality', trueStatement()), other.prove('field_equality', trueStatement())].map(claim => claim.then(() => 'proved', () => 'closed'))
  expect(await claims('waiting')).toBe(1)
  await other.close()
  expect(await Promise.all(pending)).toEqual(['closed', 'closed'])
  expect(await claims('proving')).toBe(0)
  expect(await claims('waiting')).toBe(0)
})
