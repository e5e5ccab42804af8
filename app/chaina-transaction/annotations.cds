using ChainATransactionService as service from '../../srv/chaina-transaction/service';

// List and object pages for Fiori-style clients of the chain-A transaction service: the caller's
// unsigned builds with what they spend and create, and the submissions of signed transactions.
// Amounts are lovelace.

annotate service.TransactionBuilds with @(
  UI.HeaderInfo : { TypeName: 'Transaction Build', TypeNamePlural: 'Transaction Builds', Title: { Value: txHash }, Description: { Value: kind } },
  UI.SelectionFields : [ status, kind, builder, senderAddress, network ],
  UI.LineItem : [
    { Value: createdAt }, { Value: kind }, { Value: status }, { Value: senderAddress }, { Value: recipientAddress },
    { Value: lovelaceAmount }, { Value: fee }, { Value: txHash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Build : { Data: [
    { Value: ID }, { Value: kind }, { Value: builder }, { Value: status }, { Value: network }, { Value: txHash },
    { Value: fee }, { Value: size }, { Value: createdAt }, { Value: updatedAt }, { Value: rebuiltFrom }, { Value: failureReason }
  ] },
  UI.FieldGroup #Transfer : { Data: [
    { Value: senderAddress }, { Value: recipientAddress }, { Value: changeAddress }, { Value: lovelaceAmount }
  ] },
  UI.FieldGroup #Validity : { Data: [
    { Value: invalidBefore }, { Value: invalidHereafter }, { Value: expiresAt }, { Value: signingUntil }, { Value: claimedBy }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Build', Label: 'Build', Target: '@UI.FieldGroup#Build' },
    { $Type: 'UI.ReferenceFacet', ID: 'Transfer', Label: 'Transfer', Target: '@UI.FieldGroup#Transfer' },
    { $Type: 'UI.ReferenceFacet', ID: 'Validity', Label: 'Validity and Signing', Target: '@UI.FieldGroup#Validity' },
    { $Type: 'UI.ReferenceFacet', ID: 'Inputs', Label: 'Inputs', Target: 'inputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Outputs', Label: 'Outputs', Target: 'outputs/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Assets', Label: 'Assets', Target: 'assets/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Metadata', Label: 'Metadata', Target: 'metadata/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Submissions', Label: 'Submissions', Target: 'submissions/@UI.LineItem' }
  ]
) {
  ID               @title: 'Build ID';
  owner            @title: 'Owner';
  status           @title: 'Status';
  kind             @title: 'Kind';
  builder          @title: 'Builder';
  network          @title: 'Network'  @Common.ValueList: {
    Label: 'Networks', CollectionPath: 'NetworkParametersCache',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: network, ValueListProperty: 'network' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'networkMagic' }
    ]
  };
  senderAddress    @title: 'Sender';
  recipientAddress @title: 'Recipient';
  changeAddress    @title: 'Change Address';
  lovelaceAmount   @title: 'Amount (lovelace)';
  txHash           @title: 'Transaction Hash';
  unsignedTxCbor   @title: 'Unsigned Transaction (CBOR)';
  fee              @title: 'Fee (lovelace)';
  size             @title: 'Size (bytes)';
  invalidBefore    @title: 'Valid From (slot)';
  invalidHereafter @title: 'Valid Until (slot)';
  expiresAt        @title: 'Expires';
  signingUntil     @title: 'Signing Claim Until';
  claimedBy        @title: 'Claimed by Signing Request';
  requiredSigners  @title: 'Required Signers';
  rebuiltFrom      @title: 'Rebuilt From'  @Common.ValueList: {
    Label: 'Transaction Builds', CollectionPath: 'TransactionBuilds',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: rebuiltFrom, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'createdAt' }
    ]
  };
  failureReason    @title: 'Failure Reason';
  createdAt        @title: 'Created';
  updatedAt        @title: 'Updated';
};

annotate service.TransactionSubmissions with @(
  UI.HeaderInfo : { TypeName: 'Submission', TypeNamePlural: 'Submissions', Title: { Value: txHash }, Description: { Value: status } },
  UI.SelectionFields : [ status, txHash, build_ID ],
  UI.LineItem : [
    { Value: submittedAt }, { Value: txHash }, { Value: status }, { Value: blockHeight }, { Value: confirmedAt }, { Value: errorCode }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: submittedAt, Descending: true } ] },
  UI.FieldGroup #Submission : { Data: [
    { Value: ID }, { Value: build_ID }, { Value: txHash }, { Value: status }, { Value: submittedAt }, { Value: confirmedAt },
    { Value: blockHeight }, { Value: blockHash }, { Value: errorCode }, { Value: errorMessage }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Submission', Label: 'Submission', Target: '@UI.FieldGroup#Submission' }
  ]
) {
  ID           @title: 'Submission ID';
  owner        @title: 'Owner';
  build        @title: 'Build'  @Common.ValueList: {
    Label: 'Transaction Builds', CollectionPath: 'TransactionBuilds',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: build_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'txHash' }
    ]
  };
  txHash       @title: 'Transaction Hash';
  status       @title: 'Status';
  signedTxCbor @title: 'Signed Transaction (CBOR)';
  errorCode    @title: 'Error Code';
  errorMessage @title: 'Error Message';
  submittedAt  @title: 'Submitted';
  confirmedAt  @title: 'Confirmed';
  blockHeight  @title: 'Block Height';
  blockHash    @title: 'Block Hash';
};

annotate service.BuildInputs with @(
  UI.HeaderInfo : { TypeName: 'Build Input', TypeNamePlural: 'Build Inputs', Title: { Value: txHash }, Description: { Value: outputIndex } },
  UI.LineItem : [ { Value: inputIndex }, { Value: txHash }, { Value: outputIndex }, { Value: address }, { Value: lovelace }, { Value: isCollateral } ]
) {
  inputIndex   @title: 'Input';
  txHash       @title: 'Spent Transaction';
  outputIndex  @title: 'Spent Output';
  address      @title: 'Address';
  lovelace     @title: 'Amount (lovelace)';
  isScript     @title: 'Script Input';
  isCollateral @title: 'Collateral';
};

annotate service.BuildOutputs with @(
  UI.HeaderInfo : { TypeName: 'Build Output', TypeNamePlural: 'Build Outputs', Title: { Value: address }, Description: { Value: outputIndex } },
  UI.LineItem : [ { Value: outputIndex }, { Value: address }, { Value: lovelace }, { Value: isChange }, { Value: datumHash } ]
) {
  outputIndex @title: 'Output';
  address     @title: 'Address';
  lovelace    @title: 'Amount (lovelace)';
  isChange    @title: 'Change';
  datumHash   @title: 'Datum Hash';
  inlineDatum @title: 'Inline Datum';
};

annotate service.BuildAssets with @(
  UI.HeaderInfo : { TypeName: 'Build Asset', TypeNamePlural: 'Build Assets', Title: { Value: fingerprint }, Description: { Value: role } },
  UI.LineItem : [ { Value: role }, { Value: position }, { Value: fingerprint }, { Value: assetName }, { Value: quantity } ]
) {
  role        @title: 'Role';
  position    @title: 'Input or Output';
  unit        @title: 'Unit';
  policyId    @title: 'Policy ID';
  assetName   @title: 'Asset Name';
  fingerprint @title: 'Fingerprint';
  quantity    @title: 'Quantity';
};

annotate service.BuildMetadata with @(
  UI.HeaderInfo : { TypeName: 'Build Metadata', TypeNamePlural: 'Build Metadata', Title: { Value: label } },
  UI.LineItem : [ { Value: label }, { Value: payload }, { Value: build_ID } ]
) {
  label   @title: 'Label';
  payload @title: 'Value (JSON)';
  build   @title: 'Build';
};

annotate service.ProtocolParametersCache with @(
  UI.HeaderInfo : { TypeName: 'Protocol Parameters', TypeNamePlural: 'Protocol Parameters', Title: { Value: epoch } },
  UI.LineItem : [ { Value: epoch }, { Value: minFeeA }, { Value: minFeeB }, { Value: maxTxSize }, { Value: coinsPerUtxoSize }, { Value: fetchedAt } ]
) {
  epoch            @title: 'Epoch';
  minFeeA          @title: 'Fee per Byte';
  minFeeB          @title: 'Fixed Fee';
  maxTxSize        @title: 'Max Transaction Size';
  coinsPerUtxoSize @title: 'Lovelace per UTxO Byte';
  keyDeposit       @title: 'Key Deposit (lovelace)';
  fetchedAt        @title: 'Fetched';
};

annotate service.NetworkParametersCache with @(
  UI.HeaderInfo : { TypeName: 'Network', TypeNamePlural: 'Networks', Title: { Value: network } },
  UI.LineItem : [ { Value: network }, { Value: networkMagic }, { Value: systemStart }, { Value: epochLength }, { Value: fetchedAt } ]
) {
  network       @title: 'Network';
  networkId     @title: 'Network ID';
  networkMagic  @title: 'Network Magic';
  systemStart   @title: 'System Start';
  slotLength    @title: 'Slot Length (s)';
  epochLength   @title: 'Epoch Length (slots)';
  securityParam @title: 'Security Parameter';
  fetchedAt     @title: 'Fetched';
};
