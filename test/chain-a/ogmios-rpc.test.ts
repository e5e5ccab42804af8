import type { AddressInfo } from 'node:net'
import { WebSocketServer, type WebSocket } from 'ws'
import type { ChainADevnet } from '../../devnet/chain-a/index.ts'
import { OgmiosRpc, OgmiosRpcError, parseOgmiosJson } from '../../srv/chains/chain-a/ogmios-rpc.ts'
import { startDevnet } from '../support/devnet.ts'

/**
 * The one JSON-RPC connection to Ogmios: pipelined requests over the devnet's Ogmios, error
 * answers, exact big integers, and what a lost, silent or unreachable server does to requests,
 * a submission above all (never reported lost when it may have reached the node).
 */

/** A WebSocket server that answers as `reply` says (nothing when it returns undefined). */
async function scriptedServer(reply: (request: { id: number; method: string }, socket: WebSocket) => unknown) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' })
  await new Promise(resolve => server.once('listening', resolve))
  let connections = 0
  server.on('connection', socket => {
    connections++
    socket.on('message', data => {
      const request = JSON.parse(data.toString())
      const answer = reply(request, socket)
      if (answer !== undefined) socket.send(typeof answer === 'string' ? answer : JSON.stringify(answer))
    })
  })
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    dropAll: () => server.clients.forEach(client => client.terminate()),
    close: () => new Promise(resolve => { server.clients.forEach(client => client.terminate()); server.close(resolve) }),
  }
}

const rejection = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a rejection') }, (error: unknown) => error)

describe('against the devnet', () => {
  let devnet: ChainADevnet
  let rpc: OgmiosRpc
  beforeAll(async () => {
    devnet = await startDevnet({ seed: 'ogmios-rpc' })
    for (let i = 0; i < 3; i++) devnet.produceBlock()
    rpc = new OgmiosRpc({ url: devnet.url.replace(/^http/, 'ws') + '/ogmios', timeoutMs: 10_000 })
  })
  afterAll(async () => {
    await rpc?.close()
    await devnet?.stop()
  })

  test('requests sent at once over the one connection each get their own answer', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => rpc.request(i % 2 ? 'queryNetwork/blockHeight' : 'queryLedgerState/epoch')))
    answers.forEach((answer, i) => expect(answer).toBe(i % 2 ? devnet.ledger.tip.height : devnet.ledger.currentEpoch))
  })

  test('an error answer rejects with its JSON-RPC code', async () => {
    const error = await rejection(rpc.request('queryLedgerState/noSuchQuery'))
    expect(error).toBeInstanceOf(OgmiosRpcError)
    expect((error as OgmiosRpcError).code).toBe(-32601)
  })
})

test('integers beyond 2^53 stay exact', () => {
  expect(parseOgmiosJson('{"ada":{"lovelace":45000000000000000}, "small": 12}')).toEqual({ ada: { lovelace: 45000000000000000n }, small: 12 })
})

test('a connection the server drops fails what it carried with 503, and the next request opens a new one', async () => {
  const server = await scriptedServer(request => (request.method === 'stall' ? undefined : { jsonrpc: '2.0', result: request.method, id: request.id }))
  const rpc = new OgmiosRpc({ url: server.url, timeoutMs: 10_000 })
  try {
    expect(await rpc.request('first')).toBe('first')
    const stalled = rejection(rpc.request('stall'))
    await new Promise(resolve => setTimeout(resolve, 50))
    server.dropAll()
    expect(await stalled).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect(await rpc.request('again')).toBe('again')
    expect(server.connections()).toBe(2)
  } finally {
    await rpc.close()
    await server.close()
  }
})

test('a submission whose connection is lost, or that is not answered, is unconfirmed: 503 SUBMIT_UNCONFIRMED', async () => {
  const server = await scriptedServer((request, socket) => {
    if (request.method === 'submitTransaction') socket.terminate()
    return undefined
  })
  const rpc = new OgmiosRpc({ url: server.url, timeoutMs: 300 })
  try {
    const lost = await rejection(rpc.request('submitTransaction', { transaction: { cbor: '00' } }))
    expect(lost).toMatchObject({ status: 503, code: 'SUBMIT_UNCONFIRMED' })
    expect((lost as Error).message).toMatch(/sending the same signed transaction again is safe/)
    expect(await rejection(rpc.request('queryNetwork/tip'))).toMatchObject({ status: 504, code: 'UPSTREAM_TIMEOUT' })
  } finally {
    await rpc.close()
    await server.close()
  }
})

test('an unreachable Ogmios answers 503, then at once with Retry-After while backing off', async () => {
  const server = await scriptedServer(request => ({ jsonrpc: '2.0', result: 'up', id: request.id }))
  const url = server.url
  await server.close()
  const rpc = new OgmiosRpc({ url, timeoutMs: 2000 })
  try {
    expect(await rejection(rpc.request('queryNetwork/tip'))).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    const backingOff = await rejection(rpc.request('queryNetwork/tip'))
    expect(backingOff).toMatchObject({ status: 503, code: 'UPSTREAM_UNAVAILABLE' })
    expect((backingOff as { retryAfter?: number }).retryAfter).toBeGreaterThan(0)
  } finally {
    await rpc.close()
  }
})

test('with a listener, a dropped connection is reopened by itself and the listener told', async () => {
  const server = await scriptedServer(request => ({ jsonrpc: '2.0', result: 'ok', id: request.id }))
  const rpc = new OgmiosRpc({ url: server.url, timeoutMs: 5000 })
  let connects = 0
  rpc.onConnect(() => { connects++ })
  try {
    await waitFor(() => connects === 1)
    server.dropAll()
    await waitFor(() => connects === 2)
    expect(await rpc.request('x')).toBe('ok')
    expect(server.connections()).toBe(2)
  } finally {
    await rpc.close()
    await server.close()
  }
})

async function waitFor(condition: () => boolean) {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise(resolve => setTimeout(resolve, 25))
  expect(condition()).toBe(true)
}
