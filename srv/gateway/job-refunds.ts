import { refundLater } from './ledger.ts'
import { writeDrawnCharges } from './leases.ts'

/**
 * Refunds the charge of the request that queued a job which then failed for a reason that was not
 * the caller's, once (a second call finds the charge refunded already). A call served on a unit
 * lease has its charge written in the lease's next batch: that is written first.
 */
export async function refundFailedJob(requestId: string, outcome: string): Promise<number | undefined> {
  await writeDrawnCharges()
  return refundLater(requestId, outcome.slice(0, 20))
}
