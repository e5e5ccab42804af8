import { existsSync, rmSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

/**
 * Loaded with `--import` into a server under test: whenever the file named by STRAY_ERRORS_TRIGGER
 * appears, it throws an exception from a timer and leaves a rejected promise unhandled, outside
 * any request, the way a defect in background work would. Only on the main thread: the preload
 * runs in the server's worker threads too (they inherit `--import`), and one of those taking the
 * trigger would throw where the server's handlers are not.
 */
const trigger = process.env.STRAY_ERRORS_TRIGGER
if (trigger && isMainThread) {
  setInterval(() => {
    if (!existsSync(trigger)) return
    rmSync(trigger)
    setTimeout(() => {
      throw new Error('stray exception from a timer')
    })
    void Promise.reject(new Error('stray rejection'))
  }, 50).unref()
}
