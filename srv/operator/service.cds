using { GatewayAdministration as gateway } from '../gateway/administration';
using { operator as db } from '../../db/operator';
using { KeyLanesAdministration as lanes } from '../key-lanes/administration';

/**
 * The operator's service: keys (find, issue, credit and debit with a reason, change plan, suspend
 * and resume, set or clear expiry, rotate, revoke), their ledgers, the plans and prices, and the
 * audit of every operator action. Only an operator reaches it (role admin: the mocked `alice` in
 * development, a JWT with the admin scope in production); the hosted gateway refuses every API key
 * and agent grant here (403 OPERATOR_ONLY).
 */
@path: 'operator'
@requires: 'admin'
@gateway.operator
service OperatorService {

  type Units : Integer64;

  /** A key just issued or rotated: the secret is shown in this answer once, with the client configuration. */
  type IssuedKey {
    ID            : UUID;
    ![key]        : String(64);
    plan          : String(20);
    unitsLeft     : Units;
    validUntil    : Timestamp;
    /** The MCP client configuration (JSON) of both tool servers, with the key in it. */
    mcpConfiguration : LargeString;
  }

  type AuditVerdict {
    valid    : Boolean;
    /** How many entries were checked before the first broken link (all of them when valid). */
    entries  : Integer;
    brokenAt : Integer;
    reason   : String(500);
  }

  @readonly
  @cds.search: { ID, hint, label, boundAddress, plan_name, status }
  entity Keys as projection on gateway.Keys {
    *,
    /** Units the key's open leases hold for serving instances: still the key's. */
    virtual null as unitsLeased : Units,
  } actions {
    action credit(units : Units not null, reason : String(200) not null)         returns Keys;
    action debit(units : Units not null, reason : String(200) not null)          returns Keys;
    action changePlan(plan : String(20) not null, reason : String(200))          returns Keys;
    action suspend(reason : String(200))                                         returns Keys;
    action resume(reason : String(200))                                          returns Keys;
    /** Without validUntil (or null), the key never expires. */
    action setExpiry(validUntil : Timestamp, reason : String(200))               returns Keys;
    action rotate(reason : String(200))                                          returns IssuedKey;
    action revoke(reason : String(200))                                          returns Keys;
  };

  /** The statuses a key can have (the model's own list) and what each means, for value lists and filters. */
  @readonly @cds.persistence.skip
  entity KeyStatuses {
    key code        : String(10);
        description : String(200);
        /** Whether a key of this status has its calls served. */
        servesCalls : Boolean;
  }

  @readonly entity LedgerEntries as projection on gateway.LedgerEntries;
  /** Each key's metered calls by UTC day and route class: filter by apiKey_ID and day, page with $top/$skip. */
  @readonly entity Usage         as projection on gateway.Usage;
  /** Agent grants (each key's two, and grants of their own): never the token or its hash. */
  @readonly entity Grants        as projection on gateway.Grants actions {
    action revoke(reason : String(200)) returns Grants;
  };
  /**
   * Plans: edited and added (a key's plan takes effect with its next call); never removed, keys name them.
   * Plans, prices and packs are draft-enabled for the console's object pages (edit, then save or
   * cancel); a direct PATCH of the active row still works as before.
   */
  @odata.draft.enabled
  @restrict: [{ grant: ['READ', 'CREATE', 'UPDATE'], to: 'admin' }]
  entity Plans                   as projection on gateway.Plans;
  /** The price of each route class: edited (every instance charges it within seconds); the classes are the services'. */
  @odata.draft.enabled
  @restrict: [{ grant: ['READ', 'UPDATE'], to: 'admin' }]
  entity Prices                  as projection on gateway.Prices;
  @readonly entity AuditLog      as projection on db.OperatorAuditLog;

  /** Voucher codes (never the code, stored only as a keyed hash) with their redemptions. */
  @readonly entity Vouchers           as projection on lanes.Vouchers actions {
    action revoke(reason : String(200)) returns Vouchers;
  };
  @readonly entity VoucherRedemptions as projection on lanes.VoucherRedemptions;
  /** What the purchase lane sells: edited and added (the next quote and /prices show it); never removed, purchases name them. */
  @odata.draft.enabled
  @restrict: [{ grant: ['READ', 'CREATE', 'UPDATE'], to: 'admin' }]
  entity Packs                        as projection on lanes.Packs;

  type CreatedVoucher {
    ID        : UUID;
    /** The code, shown in this answer once. */
    code      : String(24);
    units     : Units;
    uses      : Integer;
    expiresAt : Timestamp;
    label     : String(100);
  }
  type VoucherBatch {
    vouchers : many CreatedVoucher;
    /** The same codes as CSV (id, code, units, uses, expiresAt, label), to hand out: given this once. */
    csv      : LargeString;
  }
  /** Creates `count` codes worth `units` each, each redeemable by `uses` different keys (1 when absent) until `expiresAt` (never when absent). */
  action createVouchers(units : Units not null, count : Integer not null, uses : Integer, expiresAt : Timestamp, label : String(100), reason : String(200)) returns VoucherBatch;

  /**
   * URLs subscribed to events (docs/routes.md#webhooks). The secret is write-only: given (or made,
   * `whsec_...`) on create, it is in that answer and in the answer to a change that replaces it,
   * and reads as null ever after. Deactivate (active: false) to pause; delete to remove.
   */
  @cds.search: { url, description, events }
  entity WebhookSubscriptions    as projection on db.WebhookSubscriptions;
  /** Each event sent to each subscription: its body, status and attempts. */
  @readonly entity WebhookDeliveries as projection on db.WebhookDeliveries;

  type IssuedGrant {
    ID         : UUID;
    /** The token, shown in this answer once: sent as `x-agent-token`. */
    token      : String(80);
    product    : String(10);
    subject    : String(120);
    validUntil : Timestamp;
  }
  /**
   * Issues an agent grant on a product (`chain-a` or `chain-b`): all its operations, or those listed
   * (`<Service>:<operation>` or `<Service>:*`). A hosted gateway holds one here for each of its keys
   * (`subject` `hosted:<key>`: the owner of what the grant creates, kept when it is issued again).
   */
  action issueGrant(product : String(10) not null, operations : many String(200), label : String(100), subject : String(120), validUntil : Timestamp, reason : String(200)) returns IssuedGrant;
  action issueKey(plan : String(20) not null, units : Units, validDays : Integer, label : String(100), boundAddress : String(120), reason : String(200)) returns IssuedKey;
  /**
   * Exports of a period, streamed as CSV (`format='csv'`, the default) or JSON (`format='json'`, one
   * array): from (inclusive) and to (exclusive) are dates or times with their zone, at most 92 days
   * apart; key (a key's ID) narrows the export to one key. Each export is recorded in the audit.
   */
  function exportLedger(from : String(40), to : String(40), key : String(40), format : String(10)) returns @Core.MediaType: 'text/csv' LargeBinary;
  /** Usage rows (key, UTC day, route class) of the days from `from` up to the day before `to`. */
  function exportUsage(from : String(40), to : String(40), key : String(40), format : String(10))  returns @Core.MediaType: 'text/csv' LargeBinary;
  /** Audit entries of the period; with key, those whose target is the key. */
  function exportAudit(from : String(40), to : String(40), key : String(40), format : String(10))  returns @Core.MediaType: 'text/csv' LargeBinary;
  /** Checks every link of the audit up to its head; reports the first broken one. */
  function verifyAudit() returns AuditVerdict;
}
