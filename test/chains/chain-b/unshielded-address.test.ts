import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEVNET_NETWORK_ID, parseUnshieldedAddress, unshieldedAddress } from '../../../srv/chains/chain-b/unshielded-address.ts'

/** Midnight's unshielded addresses (Bech32m, `mn_addr_<network>1…`), checked against addresses recorded on its public networks. */

const recorded = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'chain-b', 'public-unshielded-addresses.json'), 'utf8')) as { addresses: string[] }).addresses

test.each(recorded)('%s reads as a 32-byte address of its network, and writes back the same', address => {
  const parsed = parseUnshieldedAddress(address)!
  expect(parsed.id).toMatch(/^[0-9a-f]{64}$/)
  expect(address.startsWith(`mn_addr_${parsed.network}1`)).toBe(true)
  expect(unshieldedAddress(parsed.id, parsed.network)).toBe(address)
})

test('the devnet writes its ids on the network "undeployed"; mainnet has no network in the prefix', () => {
  const id = 'ab'.repeat(32)
  expect(DEVNET_NETWORK_ID).toBe('undeployed')
  expect(unshieldedAddress(id)).toMatch(/^mn_addr_undeployed1[02-9ac-hj-np-z]{58}$/)
  expect(parseUnshieldedAddress(unshieldedAddress(id))).toEqual({ network: 'undeployed', id })
  expect(unshieldedAddress(id, 'mainnet')).toMatch(/^mn_addr1[02-9ac-hj-np-z]{58}$/)
  expect(parseUnshieldedAddress(unshieldedAddress(id, 'mainnet'))).toEqual({ network: 'mainnet', id })
})

test('refuses what is not one: a changed character, upper case, another prefix, a short payload, no separator, not text', () => {
  const [address] = recorded
  const changed = address.slice(0, -1) + (address.endsWith('q') ? 'p' : 'q')
  for (const text of [changed, address.toUpperCase(), address.replace('mn_addr', 'mn_dust'), 'mn_addr_undeployed1qqqqqq', 'mn_addrq', 'ab'.repeat(32), '', 'x'.repeat(500)]) {
    expect({ text, parsed: parseUnshieldedAddress(text) }).toEqual({ text, parsed: undefined })
  }
  expect(parseUnshieldedAddress(42 as never)).toBeUndefined()
})
