using { ChainATransactionService as service } from './service';

// The hosted gateway forwards this service as part of product chain A: builds cost `build`,
// submissions `submit`, everything else `read-action`, entity reads `entity-read`.
annotate service with @(gateway: { product: 'chain-a', reads: 'entity-read', operations: 'read-action' });
annotate service.BuildSimpleAdaTransaction   with @gateway.price: 'build';
annotate service.BuildMultiAssetTransaction  with @gateway.price: 'build';
annotate service.BuildTokenMintTransaction   with @gateway.price: 'build';
annotate service.BuildMetadataTransaction    with @gateway.price: 'build';
annotate service.BuildPlutusSpendTransaction with @gateway.price: 'build';
annotate service.RebuildTransaction          with @gateway.price: 'build';
annotate service.SubmitSignedTransaction     with @gateway.price: 'submit';

// Tenancy (DESIGN 5): a caller reads only its own builds and submissions, and of the rows a build is
// made of only those of its own builds; an operator (role admin) reads all. The conditions apply to
// every read of the entity set: keyed reads (another owner's key answers 404), $filter, $count,
// navigation and $expand. The actions look up ids with srv/lib/ownership.ts.
annotate service.TransactionBuilds      with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.TransactionSubmissions with @restrict: [{ grant: 'READ', where: 'owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.BuildInputs            with @restrict: [{ grant: 'READ', where: 'build.owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.BuildOutputs           with @restrict: [{ grant: 'READ', where: 'build.owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.BuildAssets            with @restrict: [{ grant: 'READ', where: 'build.owner = $user' }, { grant: 'READ', to: 'admin' }];
annotate service.BuildMetadata          with @restrict: [{ grant: 'READ', where: 'build.owner = $user' }, { grant: 'READ', to: 'admin' }];
