import { zkKeysToShip } from '../../cf/zk-keys.ts'
import { committedKeys, productionKeys, removeKeyFixtures } from '../support/zk-keys.ts'

// The circuits' keys a production build ships (npm run build:cf -- --zk-keys <folder>): the
// operator's from a verified ceremony, checked as a production start checks them, so a build never
// ships keys the start would refuse; without the option the project's own, said to be development keys.

afterAll(removeKeyFixtures)

test("the operator's keys from a verified ceremony are shipped", () => {
  const keys = productionKeys()
  expect(zkKeysToShip(keys, committedKeys, () => {})).toBe(keys)
})

test('development keys given as the operator\'s are refused, naming why and the way out', () => {
  expect(() => zkKeysToShip(committedKeys, committedKeys)).toThrow(/--zk-keys .*development keys; refusing to start in production/)
})

test('keys whose ceremony was never verified are refused', () => {
  expect(() => zkKeysToShip(productionKeys({ verified: false }), committedKeys)).toThrow(/never verified/)
})

test('a folder without a manifest is refused', () => {
  expect(() => zkKeysToShip(__dirname, committedKeys)).toThrow(/no manifest\.json there/)
})

test("without the option the project's keys are shipped, said to be development keys", () => {
  const lines: string[] = []
  expect(zkKeysToShip(undefined, committedKeys, line => lines.push(line))).toBe(committedKeys)
  expect(lines).toEqual([expect.stringMatching(/development keys: production refuses them unless CHAIN_B_ZK_ALLOW_DEVELOPMENT_KEYS=true; ship the operator's keys with --zk-keys/)])
})

test("the operator's keys put in the project's keys folder are checked alike", () => {
  const keys = productionKeys()
  expect(zkKeysToShip(undefined, keys, () => {})).toBe(keys)
  expect(() => zkKeysToShip(undefined, productionKeys({ verified: false }))).toThrow(/never verified/)
})
