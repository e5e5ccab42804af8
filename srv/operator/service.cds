using { GatewayAdministration as gateway } from '../gateway/administration';
using { operator as db } from '../../db/operator';

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

  @readonly entity LedgerEntries as projection on gateway.LedgerEntries;
  /** Agent grants (each key's two, and grants of their own): never the token or its hash. */
  @readonly entity Grants        as projection on gateway.Grants actions {
    action revoke(reason : String(200)) returns Grants;
  };
  /** Plans: edited and added (a key's plan takes effect with its next call); never removed, keys name them. */
  @restrict: [{ grant: ['READ', 'CREATE', 'UPDATE'], to: 'admin' }]
  entity Plans                   as projection on gateway.Plans;
  /** The price of each route class: edited (every instance charges it within seconds); the classes are the services'. */
  @restrict: [{ grant: ['READ', 'UPDATE'], to: 'admin' }]
  entity Prices                  as projection on gateway.Prices;
  @readonly entity AuditLog      as projection on db.OperatorAuditLog;

  /**
   * URLs subscribed to events (docs/routes.md#webhooks). The secret is write-only: given (or made,
   * `whsec_...`) on create, it is in that answer and in the answer to a change that replaces it,
   * and reads as null ever after. Deactivate (active: false) to pause; delete to remove.
   */
  @cds.search: { url, description, events }
  entity WebhookSubscriptions    as projection on db.WebhookSubscriptions;
  /** Each event sent to each subscription: its body, status and attempts. */
  @readonly entity WebhookDeliveries as projection on db.WebhookDeliveries;

  action issueKey(plan : String(20) not null, units : Units, validDays : Integer, label : String(100), boundAddress : String(120), reason : String(200)) returns IssuedKey;
  /** Checks every link of the audit up to its head; reports the first broken one. */
  function verifyAudit() returns AuditVerdict;
}
