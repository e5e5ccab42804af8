import { existsSync, rmSync } from 'node:fs'

/**
 * Loaded with `--import` into a server under test: whenever the file named by STRAY_ERRORS_TRIGGER
 * appears, it throws an exception from a timer and leaves a rejected promise unhandled, outside
 * any request, the way a defect in background work would.
 */
const trigger = process.env.STRAY_ERRORS_TRIGGER
if (trigger) {
  setInterval(() => {
    if (!existsSync(trigger)) return
    rmSync(trigger)
    setTimeout(() => {
      throw new Error('stray exception from a timer')
    })
    void Promise.reject(new Error('stray rejection'))
  }, 50).unref()
}
