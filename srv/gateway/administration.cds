using { gateway } from '../../db/gateway';

/**
 * The gateway's records as the operator service reads them: keys (without their secret's hash),
 * their ledgers, plans and prices. Internal: served over no protocol, so no HTTP caller (and no
 * gateway route) reaches it; the operator service projects on it. Changes go through the
 * gateway's functions (key-administration.ts), which keep every balance guarded.
 */
@protocol: 'none'
service GatewayAdministration {
  @readonly entity Keys          as projection on gateway.ApiKeys excluding { secretHash, grants, ledger };
  @readonly entity LedgerEntries as projection on gateway.LedgerEntries;
  @readonly entity Plans         as projection on gateway.Plans;
  @readonly entity Prices        as projection on gateway.Prices;
}
