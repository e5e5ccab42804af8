import cds from '@sap/cds'
import { gatewayConfig, gatewayProductionProblems } from '../../srv/gateway/config.ts'
import { productionProblems } from '../../srv/lib/production-settings.ts'

/** The unit-lease settings are checked at start: a value that would stop leases working is named, never used. */

const LEASE_SETTINGS = ['GATEWAY_LEASE_SECONDS', 'GATEWAY_LEASE_MIN_BALANCE', 'GATEWAY_LEASE_IDLE_MS', 'GATEWAY_LEASE_CHECK_MS']
afterEach(() => {
  for (const name of LEASE_SETTINGS) delete process.env[name]
})

describe('unit-lease settings', () => {
  test('defaults: leases of a second of calls, for keys of 1000 units or more, idle after 3 s, checked every 200 ms', () => {
    // The test profile turns leases off (package.json) for the tests that read a charge in the balance at once.
    const gateway = (cds.env.requires as unknown as Record<string, Record<string, unknown>>).gateway
    const profile = gateway.leaseSeconds
    expect(profile).toBe(0)
    delete gateway.leaseSeconds
    try {
      expect(gatewayConfig()).toMatchObject({ leaseSeconds: 1, leaseMinBalance: 1000, leaseIdleMs: 3000, leaseCheckMs: 200 })
      expect(gatewayProductionProblems()).toEqual([])
    } finally {
      gateway.leaseSeconds = profile
    }
  })

  test('0 seconds turns leases off', () => {
    process.env.GATEWAY_LEASE_SECONDS = '0'
    expect(gatewayConfig().leaseSeconds).toBe(0)
  })

  test.each([
    ['GATEWAY_LEASE_SECONDS', '-1', /^Setting GATEWAY_LEASE_SECONDS must be 0 or a positive number, got -1$/],
    ['GATEWAY_LEASE_CHECK_MS', '0', /^Setting GATEWAY_LEASE_CHECK_MS must be a positive number, got 0$/],
    ['GATEWAY_LEASE_IDLE_MS', '-5', /^Setting GATEWAY_LEASE_IDLE_MS must be a positive number, got -5$/],
    ['GATEWAY_LEASE_MIN_BALANCE', '0', /^Setting GATEWAY_LEASE_MIN_BALANCE must be a positive number, got 0$/],
  ])('%s=%s is named at start', (name, value, message) => {
    process.env[name] = value
    expect(productionProblems([gatewayProductionProblems])).toEqual([expect.stringMatching(message)])
  })
})
