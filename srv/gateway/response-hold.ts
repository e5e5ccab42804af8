import type { ServerResponse } from 'node:http'

/**
 * Lets the gateway act on a response before any of it is sent: the first writeHead, write or end
 * calls `settle(status)`; output is queued until the promise it answers resolves (so headers can
 * still be set), then replayed. `takeOver` lets the gateway answer itself (a timeout) and drops
 * whatever the handler writes afterwards.
 */
interface HeldResponse {
  /** Takes the response from the handler, unless it already started answering; its output is dropped. */
  takeOver(): boolean
  /** Sends the gateway's own answer after `takeOver()`. */
  send(status: number, headers: Record<string, string | number>, body: string): void
}

type Method = 'writeHead' | 'write' | 'end'

export function holdResponse(res: ServerResponse, settle: (status: number) => Promise<void> | void): HeldResponse {
  const original = { writeHead: res.writeHead, write: res.write, end: res.end }
  const queue: [Method, unknown[]][] = []
  let started = false
  let dropping = false

  const release = () => {
    Object.assign(res, original)
    for (const [method, args] of queue) (original[method] as (...args: unknown[]) => unknown).apply(res, args)
  }
  const handle = (method: Method, args: unknown[], status: number) => {
    if (dropping) return method === 'write' ? true : res
    queue.push([method, args])
    if (!started) {
      started = true
      Promise.resolve()
        .then(() => settle(status))
        .then(release, release)
    }
    return method === 'write' ? true : res
  }

  res.writeHead = function (statusCode: number, ...rest: unknown[]) {
    return handle('writeHead', [statusCode, ...rest], statusCode)
  } as ServerResponse['writeHead']
  res.write = function (...args: unknown[]) {
    return handle('write', args, res.statusCode)
  } as ServerResponse['write']
  res.end = function (...args: unknown[]) {
    return handle('end', args, res.statusCode)
  } as ServerResponse['end']

  return {
    takeOver() {
      if (started) return false
      started = true
      dropping = true
      return true
    },
    send(status, headers, body) {
      // The handler may have set headers (Content-Length of its own body) before its output was dropped.
      const requestId = res.getHeader('x-request-id')
      for (const name of res.getHeaderNames()) res.removeHeader(name)
      if (requestId !== undefined) res.setHeader('x-request-id', requestId)
      res.setHeader('content-length', Buffer.byteLength(body))
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value)
      original.writeHead.call(res, status)
      ;(original.end as (body: string) => unknown).call(res, body)
    },
  }
}
