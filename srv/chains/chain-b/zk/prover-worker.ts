import { readFileSync } from 'node:fs'
import workerThreads, { parentPort } from 'node:worker_threads'

/**
 * A proving thread (see prover.ts): one proof at a time, on a single-threaded curve, with the
 * circuit's witness generator and proving key read once and kept.
 */

interface Task { id: number; wasm: string; zkey: string; input: Record<string, unknown> }

// The witness generator prints a failed assertion to the console before it throws; the error carries it.
console.error = () => undefined

const files = new Map<string, Uint8Array>()
const file = (path: string) => {
  let data = files.get(path)
  if (!data) files.set(path, (data = readFileSync(path)))
  return data
}

// ffjavascript's thread-pool module (web-worker) takes any worker thread it is loaded in for one
// of its own pool's; this thread is not, and never uses that pool (its curve is single-threaded).
// snarkjs looks for a shared curve on globalThis before it builds one with a thread pool of its own.
const ready = (async () => {
  Object.defineProperty(workerThreads, 'isMainThread', { value: true })
  const snarkjs = await import('snarkjs')
  const { buildBn128 } = await import('ffjavascript')
  Object.assign(globalThis, { curve_bn128: await buildBn128(true) })
  return snarkjs
})()

parentPort!.on('message', async (task: Task) => {
  try {
    const snarkjs = await ready
    const { proof, publicSignals } = await snarkjs.groth16.fullProve(task.input, { type: 'mem', data: file(task.wasm) }, { type: 'mem', data: file(task.zkey) })
    parentPort!.postMessage({ id: task.id, proof, publicSignals })
  } catch (error) {
    parentPort!.postMessage({ id: task.id, error: String((error as Error)?.message ?? error).slice(0, 500) })
  }
})
