using { AnalyticsService as service } from './service';

// The hosted gateway forwards analytics with the key alone (no product grant underneath): every
// read and function costs `analytics`. The internals are operator functions: closed on the hosted
// API (403), `@requires: 'admin'` self-hosted.
annotate service with @(gateway: { product: 'analytics', reads: 'analytics', operations: 'analytics' });
annotate service.rebuildBuckets with @gateway.closed;
annotate service.pauseFollower  with @gateway.closed;
annotate service.resumeFollower with @gateway.closed;
