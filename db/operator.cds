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
