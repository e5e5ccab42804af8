using ChainBIndexerService as service from '../../srv/chainb-indexer/service';

// List and object pages for Fiori-style clients of the chain-B indexer: where the follower
// stands and the reorgs it has handled.

annotate service.SyncState with @(
  UI.HeaderInfo : { TypeName: 'Sync State', TypeNamePlural: 'Sync State', Title: { Value: network }, Description: { Value: status } },
  UI.SelectionFields : [ status, paused ],
  UI.LineItem : [
    { Value: network }, { Value: status }, { Value: chainHeight }, { Value: indexedHeight }, { Value: finalizedHeight },
    { Value: indexedAt }, { Value: reorgs }, { Value: paused }
  ],
  UI.FieldGroup #Position : { Data: [
    { Value: network }, { Value: status }, { Value: paused }, { Value: chainHeight }, { Value: chainTipAt }, { Value: indexedHeight },
    { Value: indexedHash }, { Value: indexedAt }, { Value: indexedBlockAt }, { Value: finalizedHeight }
  ] },
  UI.FieldGroup #Counters : { Data: [
    { Value: blocksIndexed }, { Value: transactionsIndexed }, { Value: reorgs }, { Value: consecutiveErrors }, { Value: lastError }, { Value: lastErrorAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Position', Label: 'Position', Target: '@UI.FieldGroup#Position' },
    { $Type: 'UI.ReferenceFacet', ID: 'Counters', Label: 'Counters and Errors', Target: '@UI.FieldGroup#Counters' }
  ]
) {
  ID                  @title: 'ID';
  network             @title: 'Network';
  chainHeight         @title: 'Chain Height';
  chainTipAt          @title: 'Chain Tip Time';
  indexedHeight       @title: 'Indexed Height';
  indexedHash         @title: 'Indexed Block Hash';
  indexedAt           @title: 'Indexed';
  indexedBlockAt      @title: 'Indexed Block Time';
  finalizedHeight     @title: 'Finalized Height';
  status              @title: 'Status';
  lastError           @title: 'Last Error';
  lastErrorAt         @title: 'Last Error Time';
  consecutiveErrors   @title: 'Consecutive Errors';
  blocksIndexed       @title: 'Blocks Indexed';
  transactionsIndexed @title: 'Transactions Indexed';
  reorgs              @title: 'Reorgs';
  paused              @title: 'Paused';
};

annotate service.ReorgLog with @(
  UI.HeaderInfo : { TypeName: 'Reorg', TypeNamePlural: 'Reorgs', Title: { Value: forkHeight }, Description: { Value: cause } },
  UI.SelectionFields : [ cause, forkHeight ],
  UI.LineItem : [
    { Value: detectedAt }, { Value: cause }, { Value: forkHeight }, { Value: blocksRolledBack }, { Value: oldTipHash }, { Value: newTipHash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: detectedAt, Descending: true } ] },
  UI.FieldGroup #Reorg : { Data: [
    { Value: ID }, { Value: detectedAt }, { Value: cause }, { Value: forkHeight }, { Value: blocksRolledBack }, { Value: oldTipHash }, { Value: newTipHash }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Reorg', Label: 'Reorg', Target: '@UI.FieldGroup#Reorg' }
  ]
) {
  ID               @title: 'Reorg ID';
  detectedAt       @title: 'Detected';
  forkHeight       @title: 'Fork Height';
  oldTipHash       @title: 'Old Tip';
  newTipHash       @title: 'New Tip';
  blocksRolledBack @title: 'Blocks Rolled Back';
  cause            @title: 'Cause';
};
