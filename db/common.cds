/**
 * Types every bounded context shares.
 *
 * Tenancy (DESIGN 5): every record a caller creates belongs to its owner, the CAP user id. Through
 * the hosted gateway that is the key (`key:<keyId>`, the same across rotations); self-hosted the
 * user (mocked or JWT) or the grant (`grant:<grantId>` for an x-agent-token). Records made for
 * another record (a signing request for a build, an audit entry for a request) carry that record's
 * owner, so the handlers set it; an insert that does not defaults to the caller.
 */
namespace common;

type Owner : String(255);

aspect Owned {
  owner : Owner not null @cds.on.insert: $user;
}

/**
 * JSON carried in a string parameter. `@json` tells the input guard (srv/lib/input-guard.ts) to
 * refuse nesting beyond its bound before any handler parses it.
 */
@json
type JsonText : LargeString;
