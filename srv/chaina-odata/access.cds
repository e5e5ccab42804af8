using { ChainAReadService } from './service';

// The hosted gateway forwards this service as part of product chain A: entity reads and read
// actions are metered by the price table's classes.
annotate ChainAReadService with @(gateway: { product: 'chain-a', reads: 'entity-read', operations: 'read-action' });
