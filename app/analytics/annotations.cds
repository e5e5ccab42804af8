using AnalyticsService as service from '../../srv/analytics/service';

// List and object pages for Fiori-style clients of the analytics service: the metric buckets and
// epoch snapshots over both chains, both chains' reorgs, and where each chain's follower stands.
// `chain` offers the chains (chain-a, chain-b) as fixed values, from SyncStatus.

annotate service.MetricBuckets with @(
  UI.HeaderInfo : { TypeName: 'Metric Bucket', TypeNamePlural: 'Metric Buckets', Title: { Value: metric }, Description: { Value: bucketStart } },
  UI.SelectionFields : [ chain, metric, resolution, dimension, bucketStart ],
  UI.LineItem : [
    { Value: chain }, { Value: metric }, { Value: resolution }, { Value: bucketStart }, { Value: dimension }, { Value: value }, { Value: count }, { Value: final }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: bucketStart, Descending: true } ] },
  UI.FieldGroup #Bucket : { Data: [
    { Value: chain }, { Value: network }, { Value: metric }, { Value: dimension }, { Value: resolution }, { Value: bucketStart },
    { Value: value }, { Value: count }, { Value: sum }, { Value: min }, { Value: max }, { Value: final }, { Value: sourceTipHeight }, { Value: computedAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Bucket', Label: 'Bucket', Target: '@UI.FieldGroup#Bucket' }
  ]
) {
  chain           @title: 'Chain'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Chains', CollectionPath: 'SyncStatus',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: chain, ValueListProperty: 'chain' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'network' }
    ]
  };
  network         @title: 'Network';
  metric          @title: 'Metric';
  dimension       @title: 'Dimension';
  resolution      @title: 'Resolution';
  bucketStart     @title: 'Bucket Start';
  value           @title: 'Value';
  count           @title: 'Items';
  sum             @title: 'Sum';
  min             @title: 'Minimum';
  max             @title: 'Maximum';
  final           @title: 'Final';
  sourceTipHeight @title: 'Computed at Height';
  computedAt      @title: 'Computed';
};

annotate service.EpochSnapshots with @(
  UI.HeaderInfo : { TypeName: 'Epoch Snapshot', TypeNamePlural: 'Epoch Snapshots', Title: { Value: entity }, Description: { Value: epoch } },
  UI.SelectionFields : [ chain, epoch, resource, entity ],
  UI.LineItem : [
    { Value: chain }, { Value: epoch }, { Value: resource }, { Value: entity }, { Value: value }, { Value: share }, { Value: final }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: epoch, Descending: true }, { Property: value, Descending: true } ] },
  UI.FieldGroup #Snapshot : { Data: [
    { Value: chain }, { Value: network }, { Value: epoch }, { Value: resource }, { Value: entity }, { Value: value }, { Value: share },
    { Value: final }, { Value: computedAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Snapshot', Label: 'Snapshot', Target: '@UI.FieldGroup#Snapshot' }
  ]
) {
  chain      @title: 'Chain'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Chains', CollectionPath: 'SyncStatus',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: chain, ValueListProperty: 'chain' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'network' }
    ]
  };
  network    @title: 'Network';
  epoch      @title: 'Epoch';
  resource   @title: 'Resource';
  entity     @title: 'Producer or Pool';
  value      @title: 'Value';
  share      @title: 'Share';
  final      @title: 'Final';
  computedAt @title: 'Computed';
};

annotate service.Reorgs with @(
  UI.HeaderInfo : { TypeName: 'Reorg', TypeNamePlural: 'Reorgs', Title: { Value: forkHeight }, Description: { Value: chain } },
  UI.SelectionFields : [ chain, cause ],
  UI.LineItem : [
    { Value: chain }, { Value: detectedAt }, { Value: cause }, { Value: forkHeight }, { Value: blocksRolledBack }, { Value: oldTipHash }, { Value: newTipHash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: detectedAt, Descending: true } ] },
  UI.FieldGroup #Reorg : { Data: [
    { Value: chain }, { Value: ID }, { Value: detectedAt }, { Value: cause }, { Value: forkHeight }, { Value: blocksRolledBack },
    { Value: oldTipHash }, { Value: newTipHash }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Reorg', Label: 'Reorg', Target: '@UI.FieldGroup#Reorg' }
  ]
) {
  chain            @title: 'Chain'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Chains', CollectionPath: 'SyncStatus',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: chain, ValueListProperty: 'chain' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'network' }
    ]
  };
  ID               @title: 'Reorg ID';
  detectedAt       @title: 'Detected';
  forkHeight       @title: 'Fork Height';
  oldTipHash       @title: 'Old Tip';
  newTipHash       @title: 'New Tip';
  blocksRolledBack @title: 'Blocks Rolled Back';
  cause            @title: 'Cause';
};

annotate service.SyncStatus with @(
  UI.HeaderInfo : { TypeName: 'Sync Status', TypeNamePlural: 'Sync Status', Title: { Value: chain }, Description: { Value: status } },
  UI.SelectionFields : [ chain, status ],
  UI.LineItem : [
    { Value: chain }, { Value: network }, { Value: status }, { Value: chainHeight }, { Value: indexedHeight }, { Value: finalizedHeight },
    { Value: indexedAt }, { Value: reorgs }
  ],
  UI.FieldGroup #Position : { Data: [
    { Value: chain }, { Value: network }, { Value: status }, { Value: paused }, { Value: chainHeight }, { Value: chainTipAt },
    { Value: indexedHeight }, { Value: indexedHash }, { Value: indexedAt }, { Value: finalizedHeight }, { Value: reorgs },
    { Value: lastError }, { Value: lastErrorAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Position', Label: 'Position', Target: '@UI.FieldGroup#Position' }
  ]
) {
  chain           @title: 'Chain';
  network         @title: 'Network';
  chainHeight     @title: 'Chain Height';
  chainTipAt      @title: 'Chain Tip Time';
  indexedHeight   @title: 'Indexed Height';
  indexedHash     @title: 'Indexed Block Hash';
  indexedAt       @title: 'Indexed';
  finalizedHeight @title: 'Finalized Height';
  status          @title: 'Status';
  lastError       @title: 'Last Error';
  lastErrorAt     @title: 'Last Error Time';
  reorgs          @title: 'Reorgs';
  paused          @title: 'Paused';
};

annotate service.BucketWriterState with @(
  UI.HeaderInfo : { TypeName: 'Bucket Writer State', TypeNamePlural: 'Bucket Writer State', Title: { Value: chain } },
  UI.LineItem : [ { Value: chain }, { Value: network }, { Value: foldedHeight }, { Value: foldedAt }, { Value: lastReorgAt } ]
) {
  chain        @title: 'Chain';
  network      @title: 'Network';
  foldedHeight @title: 'Folded Height';
  foldedAt     @title: 'Folded';
  lastReorgAt  @title: 'Last Reorg Considered';
};
