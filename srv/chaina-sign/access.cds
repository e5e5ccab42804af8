using { ChainASignService as service } from './service';

// The hosted gateway forwards this service as part of product chain A: signing requests and
// verifications cost `signing-request`, submissions `submit`, everything else `read-action`, entity
// reads `entity-read`. HSM signing is an operator function: closed on the hosted API, and refused to
// every product grant by the service itself.
annotate service with @(gateway: { product: 'chain-a', reads: 'entity-read', operations: 'read-action' });
annotate service.CreateSigningRequest      with @gateway.price: 'signing-request';
annotate service.VerifySignature           with @gateway.price: 'signing-request';
annotate service.SubmitVerifiedTransaction with @gateway.price: 'submit';
annotate service.SignWithHsm               with @gateway.closed;

// Tenancy (DESIGN 5): a caller reads only its own signing requests, their audit entries and its
// verified transactions; an operator (role admin) reads all. SigningPolicies and HsmConfigurations
// are the deployment's configuration, read by everyone.
annotate service.SigningRequests      with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.SigningAuditLog      with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.VerifiedTransactions with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
