import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import type { Groth16Proof } from 'snarkjs'
import { circuitFile, circuitFiles, type CircuitId } from './circuits.ts'
import { appFile } from '../../../lib/app-files.ts'
import { proofDuration, proverClaims } from '../../../metrics/instruments.ts'

/**
 * Proving off the event loop: a pool of worker threads, at most one per core, each proving one
 * claim at a time; further claims wait in order. Idle threads do not keep the process alive.
 */

export interface ProvenClaim { proof: Groth16Proof; publicSignals: string[] }

/** The witness generator refused the inputs: the statement is false for them. */
export class WitnessError extends Error {}

interface Pending {
  id: number
  circuit: CircuitId
  input: Record<string, unknown>
  resolve: (proof: ProvenClaim) => void
  reject: (error: Error) => void
  /** Stops the proof's timer (cag_proof_duration_seconds) once a thread took it. */
  stopTimer?: (labels: { outcome: string }) => void
}
interface Reply { id: number; proof?: Groth16Proof; publicSignals?: string[]; error?: string }

const workerFile = () => appFile('proverWorker')

export class ProverPool {
  readonly size: number
  private readonly keysDir: string
  private readonly idle: Worker[] = []
  private readonly busy = new Map<Worker, Pending>()
  private readonly waiting: Pending[] = []
  private nextId = 0

  constructor(keysDir: string, size = availableParallelism()) {
    this.keysDir = keysDir
    this.size = Math.max(1, size)
  }

  prove(circuit: CircuitId, input: Record<string, unknown>): Promise<ProvenClaim> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ id: ++this.nextId, circuit, input, resolve, reject })
      proverClaims.inc({ state: 'waiting' })
      this.dispatch()
    })
  }

  /** Claims proving or waiting. */
  get load() {
    return this.busy.size + this.waiting.length
  }

  /** Threads proving now, claims waiting for one, and the threads the pool may run (the readiness probe reports them). */
  get usage(): { busy: number; waiting: number; size: number } {
    return { busy: this.busy.size, waiting: this.waiting.length, size: this.size }
  }

  async close() {
    const workers = [...this.idle, ...this.busy.keys()]
    this.idle.length = 0
    proverClaims.dec({ state: 'proving' }, this.busy.size)
    proverClaims.dec({ state: 'waiting' }, this.waiting.length)
    for (const pending of [...this.busy.values(), ...this.waiting.splice(0)]) pending.reject(new Error('the prover was closed'))
    this.busy.clear()
    await Promise.all(workers.map(worker => worker.terminate()))
  }

  private dispatch() {
    while (this.waiting.length) {
      const worker = this.idle.pop() ?? (this.busy.size < this.size ? this.spawn() : undefined)
      if (!worker) return
      const task = this.waiting.shift()!
      this.busy.set(worker, task)
      proverClaims.dec({ state: 'waiting' })
      proverClaims.inc({ state: 'proving' })
      task.stopTimer = proofDuration.startTimer({ circuit: task.circuit })
      worker.ref()
      const files = circuitFiles(task.circuit)
      worker.postMessage({ id: task.id, wasm: circuitFile(this.keysDir, task.circuit, files.wasm), zkey: circuitFile(this.keysDir, task.circuit, files.zkey), input: task.input })
    }
  }

  private spawn(): Worker {
    const worker = new Worker(workerFile(), { execArgv: ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON'] })
    worker.on('message', (reply: Reply) => this.settle(worker, reply))
    worker.on('error', error => this.lose(worker, error))
    worker.on('exit', () => this.lose(worker, new Error('a proving thread stopped')))
    return worker
  }

  private settle(worker: Worker, reply: Reply) {
    const task = this.busy.get(worker)
    this.busy.delete(worker)
    worker.unref()
    this.idle.push(worker)
    if (task) {
      finished(task, reply.error === undefined ? 'proved' : 'refused')
      if (reply.error !== undefined) task.reject(new WitnessError(reply.error))
      else task.resolve({ proof: reply.proof!, publicSignals: reply.publicSignals! })
    }
    this.dispatch()
  }

  private lose(worker: Worker, error: Error) {
    const task = this.busy.get(worker)
    this.busy.delete(worker)
    const at = this.idle.indexOf(worker)
    if (at >= 0) this.idle.splice(at, 1)
    if (task) finished(task, 'failed')
    task?.reject(error)
    this.dispatch()
  }
}

/** A claim left its thread: no longer proving, its time recorded with how it ended. */
function finished(task: Pending, outcome: 'proved' | 'refused' | 'failed') {
  proverClaims.dec({ state: 'proving' })
  task.stopTimer?.({ outcome })
}
