using ChainAReadService as service from '../../srv/chaina-odata/service';

// List and object pages for Fiori-style clients of the chain-A read service.

annotate service.Blocks with @(
  UI.HeaderInfo : { TypeName: 'Block', TypeNamePlural: 'Blocks', Title: { Value: height }, Description: { Value: hash } },
  UI.SelectionFields : [ epoch, slotLeader ],
  UI.LineItem : [
    { Value: height }, { Value: time }, { Value: epoch }, { Value: slot }, { Value: txCount }, { Value: fees }, { Value: hash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: height, Descending: true } ] }
);

annotate service.Transactions with @(
  UI.HeaderInfo : { TypeName: 'Transaction', TypeNamePlural: 'Transactions', Title: { Value: hash } },
  UI.SelectionFields : [ blockHeight, hasMetadata ],
  UI.LineItem : [
    { Value: hash }, { Value: blockHeight }, { Value: blockTime }, { Value: fee }, { Value: size }, { Value: outputCount }
  ],
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', Label: 'Inputs', Target: 'inputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', Label: 'Outputs', Target: 'outputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', Label: 'Metadata', Target: 'metadata/@UI.LineItem' }
  ]
);

annotate service.TransactionInputs with @UI.LineItem : [ { Value: inputIndex }, { Value: address }, { Value: lovelace }, { Value: spentTxHash }, { Value: spentOutputIndex } ];
annotate service.TransactionOutputs with @UI.LineItem : [ { Value: outputIndex }, { Value: address }, { Value: lovelace } ];
annotate service.TransactionMetadata with @UI.LineItem : [ { Value: label }, { Value: payload } ];

annotate service.Addresses with @(
  UI.HeaderInfo : { TypeName: 'Address', TypeNamePlural: 'Addresses', Title: { Value: address } },
  UI.LineItem : [ { Value: address }, { Value: type }, { Value: totalLovelace }, { Value: utxoCount }, { Value: assetCount } ],
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', Label: 'UTxOs', Target: 'utxos/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', Label: 'Assets', Target: 'assets/@UI.LineItem' }
  ]
);

annotate service.AddressUTxOs with @UI.LineItem : [ { Value: txHash }, { Value: outputIndex }, { Value: lovelace } ];
annotate service.AddressAssets with @UI.LineItem : [ { Value: fingerprint }, { Value: assetName }, { Value: quantity } ];
annotate service.Pools with @UI.LineItem : [ { Value: ticker }, { Value: name }, { Value: liveStake }, { Value: liveSaturation }, { Value: margin }, { Value: blocksMinted } ];
annotate service.Dreps with @UI.LineItem : [ { Value: drepId }, { Value: amount }, { Value: lastActiveEpoch }, { Value: retired } ];
