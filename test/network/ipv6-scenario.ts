/**
 * Run inside a network namespace of its own (ipv6-clients.test.ts starts it with `unshare`), whose
 * loopback holds the IPv6 addresses given as arguments (three of one /64, then one of another):
 * starts the server with the gateway on, sends from each address the requests a client rotating
 * through its /64 would send, and prints one JSON line with every answer's status and code.
 */
import { request } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer } from '../support/server.ts'

interface Answer {
  from: string
  path: string
  status: number
  code?: string
}

function send(port: number, from: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request({ host: '::1', family: 6, port, path, localAddress: from, headers }, response => {
      let body = ''
      response.on('data', chunk => (body += chunk))
      response.on('end', () => resolve({ from, path, status: response.statusCode ?? 0, code: body ? JSON.parse(body).error?.code : undefined }))
    }).on('error', reject).end()
  })
}

async function main() {
  const root = join(process.argv[1], '..', '..', '..')
  const folder = mkdtempSync(join(tmpdir(), 'cag-ipv6-'))
  const env: NodeJS.ProcessEnv = {
    ...process.env, PORT: '0', CDS_ENV: '', CDS_TYPESCRIPT: 'true', NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    CDS_REQUIRES_DB_CREDENTIALS_URL: join(folder, 'db.sqlite'), DEVNET_STATE_DIR: 'none', GATEWAY_ENABLED: 'true',
    GATEWAY_AUTH_FAILURES: '3', CHAIN_B_VERIFY_RATE_PER_SECOND: '0.001', CHAIN_B_VERIFY_BURST: '3',
  }
  delete env.CDS_REQUIRES_DB_CREDENTIALS_DATABASE
  const server = await startServer(join(root, 'node_modules', '.bin', 'cds-serve'), [], { cwd: root, env, timeoutMs: 180_000 })
  try {
    const port = Number(new URL(server.url).port)
    const [first, second, third, otherNetwork] = process.argv.slice(2)
    const badKey = { authorization: 'Bearer cag_not-a-key' }
    const verify = '/odata/v4/chainb-verify/verifyDocument(sha256=\'' + '0'.repeat(64) + '\')'
    const answers: Answer[] = []
    // Failed keys: three from one address of the /64 use up its allowance; the others of the same /64 are refused.
    for (let i = 0; i < 3; i++) answers.push(await send(port, first, '/me', badKey))
    answers.push(await send(port, second, '/me', badKey), await send(port, third, '/me', badKey), await send(port, otherNetwork, '/me', badKey))
    // The free verify lane: a burst of three for the /64, whichever of its addresses asks.
    for (const from of [first, second, third]) answers.push(await send(port, from, verify))
    answers.push(await send(port, second, verify), await send(port, otherNetwork, verify))
    process.stdout.write('IPV6_ANSWERS ' + JSON.stringify(answers) + '\n')
  } finally {
    server.stop()
    await server.exited
  }
}

main().catch(error => {
  console.error(error)
  process.exit(1)
})
