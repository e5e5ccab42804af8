using { gateway } from '../../db/gateway';

/**
 * The gateway's records as the operator service reads them: keys (without their secret's hash),
 * their ledgers, plans and prices. Internal: served over no protocol, so no HTTP caller (and no
 * gateway route) reaches it; the operator service projects on it. Key changes go through the
 * gateway's functions (key-administration.ts), which keep every balance guarded; plans and prices
 * are edited as rows (every instance reads prices again every few seconds, and a key's plan with
 * the key), within the bounds annotated here.
 */
@protocol: 'none'
service GatewayAdministration {
  @readonly entity Keys          as projection on gateway.ApiKeys excluding { secretHash, grants, ledger };
  @readonly entity LedgerEntries as projection on gateway.LedgerEntries;
  /** Each metered call's charge: its UTC day, the units charged and, once refunded, the units given back. */
  @readonly entity Charges       as select from gateway.LedgerEntries {
    key ID,
        apiKey.ID                                                   as apiKey_ID     : UUID,
        date(createdAt)                                             as day           : Date,
        // Charges recorded before the family was: 'other' (a key column of Usage is never null).
        coalesce(routeFamily, 'other')                              as routeFamily   : String(60),
        routeClass,
        -units                                                      as unitsCharged  : gateway.Units,
        case when state = 'refunded' then -units else 0 end         as unitsRefunded : gateway.Units,
  } where kind = 'charge';
  /**
   * Metered calls per key, UTC day, route family (the service reached) and route class (the price class each charge records): how many,
   * the units charged for them, and of those the units given back because the call was rejected,
   * timed out or voided. Calls served on a lease are charges of their own and count the same. Two
   * views, as an expression inside an aggregate (sum(-units)) makes every schema comparison find
   * the view changed and drop and make it again.
   */
  @readonly entity Usage         as select from Charges {
    key apiKey_ID,
    key day,
    key routeFamily,
    key routeClass,
        count(1)            as calls         : gateway.Units,
        sum(unitsCharged)   as unitsCharged  : gateway.Units,
        sum(unitsRefunded)  as unitsRefunded : gateway.Units,
  } group by apiKey_ID, day, routeFamily, routeClass;
  @readonly entity Grants        as projection on gateway.ProductGrants excluding { tokenHash };
  entity Plans                   as projection on gateway.Plans;
  entity Prices                  as projection on gateway.Prices;
}

annotate GatewayAdministration.Prices with {
  units @mandatory @assert.range: [0, 1000000];
};

annotate GatewayAdministration.Plans with {
  units         @mandatory @assert.range: [0, 1000000000000];
  validityDays  @mandatory @assert.range: [1, 36500];
  ratePerSecond @mandatory @assert.range: [1, 100000];
  burst         @mandatory @assert.range: [1, 1000000];
};
