using { ChainBService as service } from './service';

// The hosted gateway forwards this service as product chain B: sponsored writes cost
// `chainb-write`, disclosure changes `chainb-disclosure`, proofs `proof` (a batch `proof-batch`),
// polling a job `job-status`, the other
// operations `read-action` and entity reads `entity-read`.
annotate service with @(gateway: { product: 'chain-b', reads: 'entity-read', operations: 'read-action' });
// A job that failed for a reason not the caller's is refunded on JobFailed; a revoked grant's
// queued jobs fail on GrantRevoked, which the gateway emits here.
annotate service with @(gateway: { refundOn: 'JobFailed', onGrantRevoked: 'GrantRevoked' });
annotate service.anchorDocument       with @gateway.price: 'chainb-write';
annotate service.commitDocumentAnchor with @gateway.price: 'chainb-write';
annotate service.attestAgentOutput    with @gateway.price: 'chainb-write';
annotate service.grantDisclosure      with @gateway.price: 'chainb-disclosure';
annotate service.revokeDisclosure     with @gateway.price: 'chainb-disclosure';
annotate service.getJobStatus         with @gateway.price: 'job-status';
annotate service.issueFieldPredicateAttestation      with @gateway.price: 'proof';
annotate service.issueFieldEqualityAttestation       with @gateway.price: 'proof';
annotate service.issueFieldMembershipAttestation     with @gateway.price: 'proof';
annotate service.issueDocumentIntegrityAttestation   with @gateway.price: 'proof';
annotate service.issueDocumentDiffAttestation        with @gateway.price: 'proof';
annotate service.issueFieldPredicateAttestationBatch with @gateway.price: 'proof-batch';
annotate service.sponsorAttestation                  with @gateway.price: 'chainb-write';

// Tenancy (DESIGN 5): a caller reads only its own records; an operator (role admin) reads all.
// Another caller's document is read through getDocument, as far as its disclosure level allows.
annotate service.Documents               with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.AgentOutputAttestations with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.Attestations            with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.DisclosureGrants        with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.Jobs                    with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
