/**
 * What operators did: one hash-chained entry per change an operator made, through the operator
 * service or the command line. Each entry's hash covers its content and the previous entry's hash,
 * so an entry changed, removed or put out of order breaks the chain from there on. Entries are only
 * ever inserted, after advancing OperatorAuditHead with a guarded UPDATE.
 */
namespace operator;

entity OperatorAuditLog {
  key sequence     : Integer;
      occurredAt   : Timestamp not null;
      /** Who did it: the operator's user id, or `cli:<system user>` for the command line. */
      actor        : String(255) not null;
      /** What was done: `key.credit`, `key.revoke`, ... */
      action       : String(40) not null;
      /** What it was done to: `key:<id>`. */
      target       : String(120) not null;
      /** The record before and after, canonical JSON without secrets (null where there was none). */
      before       : LargeString;
      after        : LargeString;
      /** Why, as the operator said (a credit's reason, say). */
      reason       : String(200);
      previousHash : String(64) not null;
      hash         : String(64) not null;
}

/** The chain's head: its last sequence and hash, one row. */
entity OperatorAuditHead {
  key ID       : Integer;
      sequence : Integer not null;
      hash     : String(64) not null;
}

/**
 * A URL an operator subscribed to events (webhooks.cds names them). Each event is POSTed to the
 * URL as JSON, signed with the subscription's secret (WebhookSecrets: never readable through any
 * service). Deactivated, a subscription gets nothing new; removed, its pending deliveries fail.
 */
entity WebhookSubscriptions {
  key ID               : UUID;
      url              : String(2000) not null;
      /** The events it wants, comma-separated: `key.exhausted,voucher.redeemed`. */
      events           : String(500) not null;
      active           : Boolean not null default true;
      /** key.balance_low: sent when a charge takes a key's units from this many or more to fewer. */
      balanceThreshold : Integer64;
      description      : String(200);
      /**
       * Write-only: a secret given on create or change is moved to WebhookSecrets before the row is
       * written, so this column is always empty (a read or a filter on it finds nothing).
       */
      secret           : String(200);
      createdAt        : Timestamp @cds.on.insert: $now;
      createdBy        : String(255) @cds.on.insert: $user;
      modifiedAt       : Timestamp @cds.on.insert: $now @cds.on.update: $now;
      modifiedBy       : String(255) @cds.on.insert: $user @cds.on.update: $user;
}

/**
 * What the webhook watches (srv/operator/webhook-watches.ts) last found, one row per watch (per key
 * for key.expired): the instance whose guarded write moves a row publishes its event, once.
 */
entity WebhookWatchStates {
  key name      : String(100);
      /** `on` or `off` for a condition; for key.expired the validUntil that was told. */
      state     : String(40) not null;
      changedAt : Timestamp not null;
}

/** Each subscription's signing secret, apart from the subscription so that no projection shows it. */
entity WebhookSecrets {
  key subscription_ID : UUID;
      secret          : String(200) not null;
}

/**
 * One event sent to one subscription: its body as sent, and each attempt's outcome. Attempts run
 * through CAP's persistent queue; a failed attempt records itself and queues the next in one
 * transaction, so the record and the queue never disagree.
 */
entity WebhookDeliveries {
  key ID             : UUID;
      subscription   : Association to WebhookSubscriptions;
      /** The event's id, the same for every subscription it goes to: the receiver de-duplicates by it. */
      eventId        : UUID not null;
      event          : String(40) not null;
      /** The JSON body POSTed: `{ id, event, occurredAt, data }`. */
      payload        : LargeString not null;
      status         : String(10) enum { pending; retrying; delivered; failed } not null default 'pending';
      attempts       : Integer not null default 0;
      lastStatusCode : Integer;
      lastError      : String(500);
      createdAt      : Timestamp not null;
      lastAttemptAt  : Timestamp;
      nextAttemptAt  : Timestamp;
      deliveredAt    : Timestamp;
}
