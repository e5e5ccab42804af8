import cds from '@sap/cds'
import { connect, type Socket } from 'node:net'
import { runningDevnet } from '../support/chain-a.ts'
import { balanceOf, issueTestKey, ledgerOf, ledgerSum, settled } from '../support/gateway.ts'
import { parseRawResponse, type RawResponse } from '../support/raw-http.ts'

process.env.GATEWAY_ENABLED = 'true'
process.env.GATEWAY_MAX_INSTANCE_CALLS = '2'
const app: { url: string } = cds.test(__dirname + '/../..') as any

afterAll(() => {
  delete process.env.GATEWAY_ENABLED
  delete process.env.GATEWAY_MAX_INSTANCE_CALLS
})

/**
 * Admission control: an instance takes at most GATEWAY_MAX_INSTANCE_CALLS metered calls at once,
 * all keys together. The calls in flight are held open by their bodies, sent only in part; every
 * call beyond the limit is answered 503 SERVER_BUSY with Retry-After, before anything is reserved.
 */

const PATH = '/odata/v4/chaina-odata/GetAddressByBech32'
const PRICE = 2

interface HeldCall {
  finish(): Promise<RawResponse>
}

/** A metered call whose request is sent up to the last byte of its body: the server holds it in flight until `finish`. */
function heldCall(key: string, body: string): HeldCall {
  const { hostname, port } = new URL(app.url)
  const socket: Socket = connect(Number(port), hostname === 'localhost' ? '127.0.0.1' : hostname)
  const chunks: Buffer[] = []
  socket.on('data', chunk => chunks.push(chunk))
  const answered = new Promise<RawResponse>((resolve, reject) => {
    socket.on('error', reject)
    socket.on('end', () => resolve(parseRawResponse(Buffer.concat(chunks).toString('latin1'))))
  })
  const head = [`POST ${PATH} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close', `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`]
  socket.write(head.join('\r\n') + '\r\n\r\n' + body.slice(0, -1))
  return {
    finish() {
      socket.write(body.slice(-1))
      return answered
    },
  }
}

async function until(what: string, probe: () => Promise<boolean>) {
  for (let i = 0; i < 600; i++) {
    if (await probe()) return
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

test('beyond GATEWAY_MAX_INSTANCE_CALLS metered calls in flight, calls of any key answer 503 SERVER_BUSY with Retry-After, uncharged; the admitted ones are charged exactly', async () => {
  const address = runningDevnet().wallets()[0].address
  const body = JSON.stringify({ address })
  const [first, second] = await Promise.all([issueTestKey({ units: 100 }), issueTestKey({ units: 100 })])
  const held = [heldCall(first.key, body), heldCall(second.key, body)]
  const charges = async (id: string) => (await ledgerOf(id)).filter(entry => entry.kind === 'charge').length
  await until('both held calls to be reserved', async () => (await charges(first.id)) + (await charges(second.id)) === 2)

  const crowded = await Promise.all([first, second, first].map(({ key }) => fetch(`${app.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body })))
  for (const answer of crowded) {
    expect((await answer.json()).error).toMatchObject({ code: 'SERVER_BUSY', message: expect.stringContaining('nothing was charged') })
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('1')
    expect(answer.headers.get('x-access-units-charged')).toBe('0')
  }

  const answers = await Promise.all(held.map(call => call.finish()))
  for (const answer of answers) {
    expect(answer.status).toBe(200)
    expect(answer.headers['x-access-units-charged']).toBe(String(PRICE))
  }
  // Once answered, their places are free again.
  const after = await fetch(`${app.url}${PATH}`, { method: 'POST', headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' }, body })
  await after.arrayBuffer()
  expect(after.status).toBe(200)

  await Promise.all([settled(first.id), settled(second.id)])
  expect(await balanceOf(first.id)).toBe(100 - 2 * PRICE)
  expect(await balanceOf(second.id)).toBe(100 - PRICE)
  expect(ledgerSum(await ledgerOf(first.id))).toBe(100 - 2 * PRICE)
  expect(ledgerSum(await ledgerOf(second.id))).toBe(100 - PRICE)
})
