import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

/**
 * GATEWAY_LANE_SECRET, the key lanes' MAC secret, as the gateway reads its configuration at start
 * (srv/gateway/index.ts installGateway): required in production and refused when short, a fixed
 * development value elsewhere, and never part of what the start prints.
 */

const root = join(__dirname, '..', '..')
const SECRET = 'a production lane secret that must never be printed'

const PROBE = `
;(async () => {
  const { gatewayConfig } = await import(require('node:url').pathToFileURL('srv/gateway/config.ts').href)
  const { laneMac } = await import(require('node:url').pathToFileURL('srv/key-lanes/lane-secret.ts').href)
  gatewayConfig()
  process.stdout.write('PROBE ' + laneMac('probe', 'part').toString('hex') + '\\n')
})().catch(error => { console.error(error.message); process.exit(1) })
`

function start(env: Record<string, string>) {
  const base = { ...process.env }
  for (const name of Object.keys(base)) if (/^(NODE_ENV|CDS_|cds_|GATEWAY_)/.test(name)) delete base[name]
  const run = spawnSync(process.execPath, ['-e', PROBE], {
    cwd: root, encoding: 'utf8', timeout: 60_000,
    env: { ...base, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...env },
  })
  return { status: run.status, output: `${run.stdout}${run.stderr}`, mac: /^PROBE ([0-9a-f]{64})$/m.exec(run.stdout)?.[1] }
}

const PRODUCTION = { CDS_ENV: 'production', GATEWAY_VOUCHER_PEPPER: 'a production voucher pepper' }

test('production refuses to start without it, naming it', () => {
  const run = start(PRODUCTION)
  expect(run.output).toMatch(/GATEWAY_LANE_SECRET must be set in production/)
  expect(run.status).not.toBe(0)
})

test('a secret shorter than 32 characters is refused, and not printed', () => {
  const run = start({ ...PRODUCTION, GATEWAY_LANE_SECRET: 'short secret' })
  expect(run.output).toMatch(/GATEWAY_LANE_SECRET must have at least 32 characters/)
  expect(run.output).not.toContain('short secret')
  expect(run.status).not.toBe(0)
})

test('with the secret production starts, never prints it, and MACs depend on it; elsewhere a fixed development value stands in', () => {
  const production = start({ ...PRODUCTION, GATEWAY_LANE_SECRET: SECRET })
  expect(production.status).toBe(0)
  expect(production.output).not.toContain(SECRET)
  const development = start({})
  expect(development.status).toBe(0)
  expect(development.mac).toBe(start({}).mac)
  expect(development.mac).not.toBe(production.mac)
})
