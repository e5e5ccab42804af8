import cds from '@sap/cds'

/**
 * What must outlast a failed request (a policy refusal, a ledger rejection, an expiry found on the
 * way): once the request's own changes are rolled back, `work` runs in a transaction of its own.
 */
export function afterRollback(req: cds.Request, work: (error: unknown) => Promise<unknown>) {
  ;(req as any).on('failed', async (error: unknown) => {
    try {
      await cds.tx(() => work(error))
    } catch (failure) {
      cds.log('chaina-sign').error('could not record after the rollback of', req.event, failure)
    }
  })
}
