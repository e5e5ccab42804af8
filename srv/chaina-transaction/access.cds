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
