import cds from '@sap/cds'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'

/**
 * The framework behaviour the request pipeline relies on where it cannot use a public hook
 * (plugins/request-pipeline/pipeline.ts, srv/lib/service-entry.ts, srv/lib/error-codes.ts). A CAP
 * upgrade that changes one of these fails here, by name, instead of weakening a guard silently.
 */

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

describe('srv.handle: where every event of a service is dispatched', () => {
  test('before handlers run in parallel: a check as one more before handler could not stop the others', async () => {
    const srv = new cds.Service('seams')
    const steps: string[] = []
    srv.before('ping', async () => {
      steps.push('slow starts')
      await sleep(20)
      steps.push('slow ends')
    })
    srv.before('ping', () => void steps.push('quick runs'))
    srv.on('ping', () => 'pong')
    await expect(srv.send('ping', {})).resolves.toBe('pong')
    expect(steps).toEqual(['slow starts', 'quick runs', 'slow ends'])
  })

  test('actions, reads and writes all pass through srv.handle, after the transaction and target are in place', async () => {
    const srv = new cds.Service('seams')
    srv.on('*', () => [])
    const seen: string[] = []
    const handle = (srv as any).handle
    ;(srv as any).handle = function (req: cds.Request) {
      seen.push(`${req.event}${(req as any).tx ? ' in a transaction' : ''}`)
      return handle.call(this, req)
    }
    await srv.send('anAction', {})
    await srv.run(SELECT.from('Things'))
    await srv.run(INSERT.into('Things').entries({ ID: 1 }))
    await srv.run(UPDATE('Things').set({ name: 'x' }))
    await srv.run(DELETE.from('Things'))
    expect(seen).toEqual(['anAction in a transaction', 'READ in a transaction', 'CREATE in a transaction', 'UPDATE in a transaction', 'DELETE in a transaction'])
  })
})

describe('error answers', () => {
  test("the protocol adapters answer errors with cds.middlewares.after, whose first is CAP's errors middleware until ours goes in front", () => {
    const after = (cds.middlewares as any).after as Array<{ factory?: unknown }>
    expect(Array.isArray(after)).toBe(true)
    expect(after.some(middleware => middleware.factory === (cds.middlewares as any).errors)).toBe(true)
  })

  test('the modules whose failures error-codes.ts recognises by stack path are where it looks for them', () => {
    const cdsRoot = dirname(require.resolve('@sap/cds/package.json'))
    expect(existsSync(join(cdsRoot, 'libx', 'odata', 'parse', 'parser.js'))).toBe(true)
    const dbService = dirname(require.resolve('@cap-js/db-service/package.json'))
    expect(existsSync(join(dbService, 'lib', 'cqn4sql.js'))).toBe(true)
    expect(existsSync(join(dbService, 'lib', 'infer'))).toBe(true)
  })
})

describe('the local plugin', () => {
  test('CAP finds the request pipeline among the project\'s plugins', () => {
    const plugins = require('@sap/cds/lib/plugins.js').fetch() as Record<string, { impl: string }>
    expect(plugins['cag-request-pipeline']?.impl).toMatch(/request-pipeline[\\/]cds-plugin\.js$/)
  })
})
