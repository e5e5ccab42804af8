/**
 * Webhooks, as the rest of the application reaches them (webhooks.ts): a service publishes an event
 * inside the transaction that makes it true; for each active subscription that wants it, a delivery
 * is recorded and queued in that same transaction, and sent once it commits (a rolled-back change
 * sends nothing). `deliver` is the queued attempt. Internal: served over no protocol, so no HTTP
 * caller (and no gateway route) reaches it.
 */
@protocol: 'none'
service OperatorWebhooks {
  /** An event happened: `data` is its JSON object (webhook-events.ts names the events). */
  action publish(event : String(40), data : LargeString);
  /**
   * A charge or lease took units from a key: from `before` to `after`. Called on every metered
   * call, so it reads no database unless a subscription's threshold (or zero) was crossed.
   */
  action unitsTaken(key : UUID, before : Integer64, after : Integer64);
  /** Attempt `attempt` (from 1) at one delivery (queued). */
  action deliver(delivery : UUID, attempt : Integer);
}
