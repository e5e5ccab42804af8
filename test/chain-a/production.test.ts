import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * Which code the bootstrap's chain-A step loads, per profile: it runs in a process of its own
 * (srv/server.ts connectChainA, then cds.connect.to('chain-a')), where a module hook lists every
 * module loaded. In production no module of the devnet is loaded, whatever the devnet option says,
 * and the Blockfrost project id is never logged; in development the embedded devnet is the upstream.
 */

const root = join(__dirname, '..', '..')
const DEVNET_CODE = `${pathToFileURL(join(root, 'devnet')).href}/`
const PROJECT_ID = 'preprodProbeProjectIdThatMustNotBeLogged'

const PROBE = `
const { registerHooks } = require('node:module')
const loaded = []
registerHooks({ load: (url, context, next) => (loaded.push(url), next(url, context)) })
;(async () => {
  const cds = require('@sap/cds')
  // As cds serve logs each service it connects to, with CAP's redaction of credentials.
  cds.on('connect', srv => console.log('connect to', srv.name, cds.utils.redacted(srv.options.credentials)))
  const { connectChainA } = await import(require('node:url').pathToFileURL('srv/server.ts').href)
  await connectChainA()
  const chain = await cds.connect.to('chain-a')
  const answer = { profiles: cds.env.profiles, kind: chain.options.kind, network: chain.networkName, url: chain.settings.url ?? null, loaded }
  process.stdout.write('PROBE ' + JSON.stringify(answer) + '\\n')
  process.exit(0)
})().catch(error => { console.error(error); process.exit(1) })
`

interface Probe {
  profiles: string[]
  kind: string
  network: string
  url: string | null
  loaded: string[]
}

function probe(env: Record<string, string>): { answer: Probe; output: string } {
  const base = { ...process.env }
  for (const name of Object.keys(base)) if (/^(NODE_ENV|CDS_|cds_|CHAIN_A_|BLOCKFROST_|DEVNET_)/.test(name)) delete base[name]
  const run = spawnSync(process.execPath, ['-e', PROBE], {
    cwd: root, encoding: 'utf8', timeout: 60_000,
    env: { ...base, CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', ...env },
  })
  const output = `${run.stdout}${run.stderr}`
  const line = /^PROBE (.*)$/m.exec(run.stdout)
  if (run.status !== 0 || !line) throw new Error(`the probe failed (${run.status}):\n${output}`)
  return { answer: JSON.parse(line[1]), output }
}

const devnetModules = (answer: Probe) => answer.loaded.filter(url => url.includes(DEVNET_CODE))

describe('production', () => {
  it.each([
    ['with hosted Blockfrost', { BLOCKFROST_PROJECT_ID: PROJECT_ID }],
    ['even when the devnet option is on', { BLOCKFROST_PROJECT_ID: PROJECT_ID, CHAIN_A_DEVNET: 'true' }],
  ])('%s: the blockfrost kind, and no devnet code loaded', (_, env) => {
    const { answer, output } = probe({ CDS_ENV: 'production', ...env })
    expect(answer).toMatchObject({ profiles: ['production'], kind: 'blockfrost', network: 'preprod', url: null })
    expect(answer.loaded.some(url => url.endsWith('/srv/chains/chain-a/service.ts'))).toBe(true)
    expect(devnetModules(answer)).toEqual([])
    expect(output).not.toContain(PROJECT_ID)
  })
})

describe('development', () => {
  it('starts the embedded devnet and puts its URL into the chain-a options', () => {
    const { answer } = probe({ DEVNET_STATE_DIR: 'none', DEVNET_BLOCK_TIME_MS: '0', DEVNET_ACTIVITY: 'false' })
    expect(answer).toMatchObject({ profiles: ['development'], kind: 'blockfrost', network: 'devnet', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/) })
    expect(devnetModules(answer).length).toBeGreaterThan(5)
  })

  it('a configured URL is the upstream: no devnet code loaded', () => {
    const { answer } = probe({ BLOCKFROST_URL: 'http://127.0.0.1:3999', CHAIN_A_NETWORK: 'preview' })
    expect(answer).toMatchObject({ network: 'preview', url: 'http://127.0.0.1:3999' })
    expect(devnetModules(answer)).toEqual([])
  })
})
