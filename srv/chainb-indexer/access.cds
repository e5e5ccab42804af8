using { ChainBIndexerService as service } from './service';

// The hosted gateway forwards this service as part of product chain B: entity reads cost
// `entity-read`, the functions `read-action`. Crawler control is an operator function: closed on the
// hosted API (403), and `@requires: 'admin'` self-hosted.
annotate service with @(gateway: { product: 'chain-b', reads: 'entity-read', operations: 'read-action' });
annotate service.pauseCrawler      with @gateway.closed;
annotate service.resumeCrawler     with @gateway.closed;
annotate service.reindexFromHeight with @gateway.closed;
