import cds from '@sap/cds'
import OperatorWebhooks from '#cds-models/OperatorWebhooks'
import { outsideRequest } from './request-work.ts'

/**
 * What the gateway and its lanes tell the operator's webhooks (srv/operator/webhooks.cds), inside
 * the transaction of the change: a delivery is queued with the change and sent once it commits.
 * Where the service is not served (the command line), nothing is told.
 */
export async function tellWebhooks(event: 'unitsTaken' | 'publish', data: Record<string, unknown>): Promise<void> {
  const webhooks = cds.services[OperatorWebhooks.name] as cds.Service | undefined
  if (webhooks) await webhooks.send(event, data)
}

/** Publishes an event (its data a JSON object) to the subscriptions that want it, in the current transaction. */
export const publishWebhookEvent = (event: string, data: Record<string, unknown>) => tellWebhooks('publish', { event, data: JSON.stringify(data) })

/** Publishes an event in a transaction of its own, outside any request (a state this instance noticed). */
export function publishWebhookEventSoon(event: string, data: Record<string, unknown>) {
  if (!cds.services[OperatorWebhooks.name]) return
  void outsideRequest(() => cds.tx(() => publishWebhookEvent(event, data))).catch(error => cds.log('webhooks').warn(`could not publish ${event}`, error))
}
