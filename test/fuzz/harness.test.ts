import { createServer, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { closeConnections, resentOnFreshConnection, send, type Probe } from './http.ts'

/**
 * The fuzz suite's client tells a dead server from a kept-alive connection the server closed as it
 * was reused: the second is sent again on a fresh connection, the first stays a failure.
 */

const probe: Probe = { name: 'GET /', group: 'harness', kinds: [], method: 'GET', target: '/', anonymous: true }
let server: Server
let url: string
const sockets: Socket[] = []

beforeAll(async () => {
  server = createServer((_req, res) => res.end('ok'))
  server.on('connection', socket => sockets.push(socket))
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})

afterAll(async () => {
  closeConnections()
  await new Promise(resolve => server.close(resolve))
})

test('a request on a kept-alive connection the server just closed is sent again on a fresh one', async () => {
  const first = await send(url, '', probe)
  expect('answer' in first && first.answer.body).toBe('ok')
  const before = resentOnFreshConnection
  // The server closes the idle connection; the client reuses it before it has read the close.
  for (const socket of sockets.splice(0)) socket.resetAndDestroy()
  const second = await send(url, '', probe)
  expect('answer' in second && second.answer.body).toBe('ok')
  expect(resentOnFreshConnection).toBe(before + 1)
})

test('a server that drops the connection it took is a failure, not a retry', async () => {
  const dropping = createServer(req => req.socket.destroy())
  await new Promise<void>(resolve => dropping.listen(0, '127.0.0.1', resolve))
  const before = resentOnFreshConnection
  const outcome = await send(`http://127.0.0.1:${(dropping.address() as { port: number }).port}`, '', probe)
  await new Promise(resolve => dropping.close(resolve))
  expect('error' in outcome && outcome.error).toMatch(/ECONNRESET|socket hang up/)
  expect(resentOnFreshConnection).toBe(before)
})
