import cds from '@sap/cds'
import { Agent, request } from 'node:http'
import type { Socket } from 'node:net'

/**
 * An idle keep-alive connection stays open past Node's default 5 s: a client reusing it after 6 s
 * is answered on the same connection (with the default, the server closed it, and a client that
 * sent at that moment got a reset instead of an answer).
 */
const app = cds.test(__dirname + '/../..') as unknown as { url: string }

function get(agent: Agent, path: string): Promise<{ status: number; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const sent = request(`${app.url}${path}`, { agent }, answer => {
      answer.resume()
      answer.on('end', () => resolve({ status: answer.statusCode!, socket: sent.socket as Socket }))
    })
    sent.on('error', reject)
    sent.end()
  })
}

test('a connection idle for 6 s is reused and answered', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const first = await get(agent, '/health')
    expect(first.status).toBe(200)
    await new Promise(resolve => setTimeout(resolve, 6000))
    expect(first.socket.destroyed).toBe(false)
    const second = await get(agent, '/health')
    expect(second.status).toBe(200)
    expect(second.socket).toBe(first.socket)
  } finally {
    agent.destroy()
  }
}, 30_000)
