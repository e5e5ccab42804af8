import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { HAND_BACK_MS, shutdownGraceMs } from '../../srv/lib/graceful-stop.ts'

/** The grace after a stop signal: longer than the gateway's call timeout by default, set by SHUTDOWN_GRACE_MS or the pipeline's option. */
describe('SHUTDOWN_GRACE_MS', () => {
  test('defaults to 40 s, longer than the gateway\'s 30 s call timeout', () => {
    expect(shutdownGraceMs({}, {})).toBe(40_000)
  })

  test('the variable wins over cds.requires[\'request-pipeline\'].shutdownGraceMs', () => {
    expect(shutdownGraceMs({ 'request-pipeline': { shutdownGraceMs: 8000 } }, {})).toBe(8000)
    expect(shutdownGraceMs({ 'request-pipeline': { shutdownGraceMs: 8000 } }, { SHUTDOWN_GRACE_MS: '6000' })).toBe(6000)
  })

  test('a malformed value is refused, naming the variable', () => {
    expect(() => shutdownGraceMs({}, { SHUTDOWN_GRACE_MS: 'soon' })).toThrow(/SHUTDOWN_GRACE_MS/)
    expect(() => shutdownGraceMs({}, { SHUTDOWN_GRACE_MS: '-1' })).toThrow(/SHUTDOWN_GRACE_MS/)
  })

  test('the Cloud Foundry deployment\'s grace and the hand-back time stay within the platform\'s 10 s', () => {
    const mta = readFileSync(join(__dirname, '..', '..', 'mta.yaml'), 'utf8')
    const grace = Number(/SHUTDOWN_GRACE_MS: '(\d+)'/.exec(mta)?.[1])
    expect(grace + HAND_BACK_MS).toBeLessThan(10_000)
  })
})
