using ChainBService as service from '../../srv/chainb/service';

// List and object pages for Fiori-style clients of the chain-B service: the caller's documents,
// agent-output attestations, claims, disclosure grants and the jobs that carry them to the chain;
// and the chain index (blocks, transactions, contract actions, unshielded UTXOs).

// ---------------------------------------------------------------------------------------------
// Vault records

annotate service.Documents with @(
  UI.HeaderInfo : { TypeName: 'Document', TypeNamePlural: 'Documents', Title: { Value: payloadHash }, Description: { Value: contentType } },
  UI.SelectionFields : [ status, kind, contentType, payloadHash ],
  UI.LineItem : [
    { Value: createdAt }, { Value: payloadHash }, { Value: kind }, { Value: contentType }, { Value: size }, { Value: status }, { Value: anchorHeight }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Document : { Data: [
    { Value: ID }, { Value: payloadHash }, { Value: kind }, { Value: contentType }, { Value: size }, { Value: storageRef },
    { Value: metadata }, { Value: metadataHash }, { Value: commitment }, { Value: attesterId }, { Value: createdAt }
  ] },
  UI.FieldGroup #Anchor : { Data: [
    { Value: status }, { Value: anchoredTxHash }, { Value: anchorHeight }, { Value: anchoredAt }, { Value: job_ID }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Document', Label: 'Document', Target: '@UI.FieldGroup#Document' },
    { $Type: 'UI.ReferenceFacet', ID: 'Anchor', Label: 'Anchor', Target: '@UI.FieldGroup#Anchor' }
  ]
) {
  ID             @title: 'Document ID';
  owner          @title: 'Owner';
  payloadHash    @title: 'Payload Hash (SHA-256)';
  contentType    @title: 'Content Type';
  size           @title: 'Size (bytes)';
  storageRef     @title: 'Storage Reference';
  metadata       @title: 'Metadata';
  metadataHash   @title: 'Metadata Hash';
  kind           @title: 'Kind';
  commitment     @title: 'Commitment';
  attesterId     @title: 'Attester ID';
  status         @title: 'Status';
  anchoredTxHash @title: 'Anchor Transaction';
  anchorHeight   @title: 'Anchor Block Height';
  anchoredAt     @title: 'Anchored';
  job            @title: 'Job'  @Common.ValueList: {
    Label: 'Jobs', CollectionPath: 'Jobs',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: job_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  createdAt      @title: 'Created';
};

annotate service.AgentOutputAttestations with @(
  UI.HeaderInfo : { TypeName: 'Agent Output Attestation', TypeNamePlural: 'Agent Output Attestations', Title: { Value: agentId }, Description: { Value: payloadHash } },
  UI.SelectionFields : [ agentId, modelId, payloadHash ],
  UI.LineItem : [
    { Value: createdAt }, { Value: agentId }, { Value: modelId }, { Value: producedAt }, { Value: outputHash }, { Value: payloadHash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Envelope : { Data: [
    { Value: ID }, { Value: agentId }, { Value: modelId }, { Value: inputHash }, { Value: outputHash }, { Value: policyHash },
    { Value: producedAt }, { Value: storageRef }, { Value: payloadHash }, { Value: envelopeJson }, { Value: document_ID }, { Value: createdAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Envelope', Label: 'Envelope', Target: '@UI.FieldGroup#Envelope' }
  ]
) {
  ID           @title: 'Attestation ID';
  owner        @title: 'Owner';
  agentId      @title: 'Agent';
  inputHash    @title: 'Input Hash';
  outputHash   @title: 'Output Hash';
  modelId      @title: 'Model';
  policyHash   @title: 'Policy Hash';
  producedAt   @title: 'Produced';
  storageRef   @title: 'Storage Reference';
  payloadHash  @title: 'Envelope Hash (SHA-256)';
  envelopeJson @title: 'Envelope (JSON)';
  document     @title: 'Document'  @Common.ValueList: {
    Label: 'Documents', CollectionPath: 'Documents',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: document_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'payloadHash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  createdAt    @title: 'Created';
};

annotate service.Attestations with @(
  UI.HeaderInfo : { TypeName: 'Attestation', TypeNamePlural: 'Attestations', Title: { Value: kind }, Description: { Value: payloadHash } },
  UI.SelectionFields : [ kind, status, circuitId, payloadHash ],
  UI.LineItem : [
    { Value: createdAt }, { Value: kind }, { Value: circuitId }, { Value: payloadHash }, { Value: status }, { Value: provenHeight }, { Value: provenAt }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Claim : { Data: [
    { Value: ID }, { Value: kind }, { Value: circuitId }, { Value: payloadHash }, { Value: payloadHashB }, { Value: claim },
    { Value: attesterId }, { Value: batchIndex }, { Value: createdAt }
  ] },
  UI.FieldGroup #Proof : { Data: [
    { Value: status }, { Value: job_ID }, { Value: provenTxHash }, { Value: provenHeight }, { Value: provenAt }, { Value: proof }, { Value: publicSignals }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Claim', Label: 'Claim', Target: '@UI.FieldGroup#Claim' },
    { $Type: 'UI.ReferenceFacet', ID: 'Proof', Label: 'Proof', Target: '@UI.FieldGroup#Proof' }
  ]
) {
  ID            @title: 'Attestation ID';
  owner         @title: 'Owner';
  kind          @title: 'Kind';
  circuitId     @title: 'Circuit';
  payloadHash   @title: 'Document (Payload Hash)'  @Common.ValueList: {
    Label: 'Documents', CollectionPath: 'Documents',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: payloadHash, ValueListProperty: 'payloadHash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'contentType' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  payloadHashB  @title: 'Second Document (Payload Hash)';
  claim         @title: 'Claim (JSON)';
  proof         @title: 'Proof (JSON)';
  publicSignals @title: 'Public Signals (JSON)';
  attesterId    @title: 'Attester ID';
  status        @title: 'Status';
  batchIndex    @title: 'Place in Batch';
  job           @title: 'Job'  @Common.ValueList: {
    Label: 'Jobs', CollectionPath: 'Jobs',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: job_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  provenTxHash  @title: 'Proof Transaction';
  provenHeight  @title: 'Proof Block Height';
  provenAt      @title: 'Proven';
  createdAt     @title: 'Created';
};

annotate service.DisclosureGrants with @(
  UI.HeaderInfo : { TypeName: 'Disclosure Grant', TypeNamePlural: 'Disclosure Grants', Title: { Value: grantee }, Description: { Value: role } },
  UI.SelectionFields : [ status, role, grantee, payloadHash ],
  UI.LineItem : [ { Value: createdAt }, { Value: payloadHash }, { Value: grantee }, { Value: role }, { Value: level }, { Value: status } ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Grant : { Data: [
    { Value: ID }, { Value: payloadHash }, { Value: grantee }, { Value: role }, { Value: level }, { Value: status },
    { Value: grantedTxHash }, { Value: revokedTxHash }, { Value: job_ID }, { Value: revokeJob_ID }, { Value: createdAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Grant', Label: 'Grant', Target: '@UI.FieldGroup#Grant' }
  ]
) {
  ID            @title: 'Grant ID';
  owner         @title: 'Owner';
  payloadHash   @title: 'Document (Payload Hash)'  @Common.ValueList: {
    Label: 'Documents', CollectionPath: 'Documents',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: payloadHash, ValueListProperty: 'payloadHash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'contentType' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  grantee       @title: 'Grantee (Attester ID)';
  role          @title: 'Role';
  level         @title: 'Level';
  status        @title: 'Status';
  grantedTxHash @title: 'Grant Transaction';
  revokedTxHash @title: 'Revocation Transaction';
  job           @title: 'Grant Job'  @Common.ValueList: {
    Label: 'Jobs', CollectionPath: 'Jobs',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: job_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  revokeJob     @title: 'Revocation Job'  @Common.ValueList: {
    Label: 'Jobs', CollectionPath: 'Jobs',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: revokeJob_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'kind' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  createdAt     @title: 'Created';
};

annotate service.Jobs with @(
  UI.HeaderInfo : { TypeName: 'Job', TypeNamePlural: 'Jobs', Title: { Value: kind }, Description: { Value: status } },
  UI.SelectionFields : [ kind, status, errorCode, idempotencyKey ],
  UI.LineItem : [
    { Value: queuedAt }, { Value: kind }, { Value: status }, { Value: attempt }, { Value: blockHeight }, { Value: finishedAt }, { Value: errorCode }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: queuedAt, Descending: true } ] },
  UI.FieldGroup #Job : { Data: [
    { Value: ID }, { Value: kind }, { Value: status }, { Value: idempotencyKey }, { Value: attempt }, { Value: maxAttempts },
    { Value: attesterSubject }, { Value: refunded }, { Value: errorCode }, { Value: errorMessage }
  ] },
  UI.FieldGroup #Chain : { Data: [
    { Value: txHash }, { Value: txIdentifier }, { Value: blockHeight }, { Value: queuedAt }, { Value: startedAt }, { Value: submittedAt }, { Value: finishedAt }
  ] },
  UI.FieldGroup #Contents : { Data: [ { Value: request }, { Value: result } ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Job', Label: 'Job', Target: '@UI.FieldGroup#Job' },
    { $Type: 'UI.ReferenceFacet', ID: 'Chain', Label: 'On Chain', Target: '@UI.FieldGroup#Chain' },
    { $Type: 'UI.ReferenceFacet', ID: 'Contents', Label: 'Request and Result', Target: '@UI.FieldGroup#Contents' }
  ]
) {
  ID              @title: 'Job ID';
  owner           @title: 'Owner';
  kind            @title: 'Kind';
  status          @title: 'Status';
  idempotencyKey  @title: 'Idempotency Key';
  request         @title: 'Request (JSON)';
  result          @title: 'Result (JSON)';
  errorCode       @title: 'Error Code';
  errorMessage    @title: 'Error Message';
  attempt         @title: 'Attempt';
  maxAttempts     @title: 'Max Attempts';
  txHash          @title: 'Transaction Hash';
  txIdentifier    @title: 'Transaction Identifier';
  blockHeight     @title: 'Block Height';
  attesterSubject @title: 'Attester';
  refunded        @title: 'Refunded';
  queuedAt        @title: 'Queued';
  startedAt       @title: 'Started';
  submittedAt     @title: 'Submitted';
  finishedAt      @title: 'Finished';
};

// ---------------------------------------------------------------------------------------------
// Chain index

annotate service.Blocks with @(
  UI.HeaderInfo : { TypeName: 'Block', TypeNamePlural: 'Blocks', Title: { Value: height }, Description: { Value: hash } },
  UI.SelectionFields : [ epoch, author, finalized ],
  UI.LineItem : [
    { Value: height }, { Value: timestamp }, { Value: epoch }, { Value: txCount }, { Value: author }, { Value: finalized }, { Value: hash }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: height, Descending: true } ] },
  UI.FieldGroup #Block : { Data: [
    { Value: hash }, { Value: height }, { Value: timestamp }, { Value: epoch }, { Value: author }, { Value: parentHash },
    { Value: protocolVersion }, { Value: txCount }, { Value: finalized }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Block', Label: 'Block', Target: '@UI.FieldGroup#Block' },
    { $Type: 'UI.ReferenceFacet', ID: 'Transactions', Label: 'Transactions', Target: 'transactions/@UI.LineItem' }
  ]
) {
  hash            @title: 'Block Hash';
  height          @title: 'Height';
  protocolVersion @title: 'Protocol Version';
  timestamp       @title: 'Time';
  author          @title: 'Author';
  parentHash      @title: 'Parent Hash';
  epoch           @title: 'Epoch';
  txCount         @title: 'Transactions';
  finalized       @title: 'Final';
};

annotate service.Transactions with @(
  UI.HeaderInfo : { TypeName: 'Transaction', TypeNamePlural: 'Transactions', Title: { Value: hash }, Description: { Value: transactionType } },
  UI.SelectionFields : [ blockHeight, transactionType, status, isShielded ],
  UI.LineItem : [
    { Value: hash }, { Value: blockHeight }, { Value: transactionType }, { Value: status }, { Value: paidFees }, { Value: isShielded }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: blockHeight, Descending: true }, { Property: transactionId, Descending: true } ] },
  UI.FieldGroup #Transaction : { Data: [
    { Value: hash }, { Value: block_hash }, { Value: blockHeight }, { Value: transactionId }, { Value: transactionType }, { Value: status },
    { Value: protocolVersion }, { Value: identifier }, { Value: paidFees }, { Value: estimatedFees }
  ] },
  UI.FieldGroup #Contents : { Data: [
    { Value: isShielded }, { Value: zswapEventCount }, { Value: unshieldedInputs }, { Value: unshieldedOutputs },
    { Value: merkleTreeRoot }, { Value: startIndex }, { Value: endIndex }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Transaction', Label: 'Transaction', Target: '@UI.FieldGroup#Transaction' },
    { $Type: 'UI.ReferenceFacet', ID: 'Contents', Label: 'Contents', Target: '@UI.FieldGroup#Contents' },
    { $Type: 'UI.ReferenceFacet', ID: 'ContractActions', Label: 'Contract Actions', Target: 'contractActions/@UI.LineItem' },
    { $Type: 'UI.ReferenceFacet', ID: 'Segments', Label: 'Segments', Target: 'segments/@UI.LineItem' }
  ]
) {
  hash              @title: 'Transaction Hash';
  block             @title: 'Block Hash'  @Common.ValueList: {
    Label: 'Blocks', CollectionPath: 'Blocks',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: block_hash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'height' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'timestamp' }
    ]
  };
  blockHeight       @title: 'Block Height';
  transactionId     @title: 'Indexer ID';
  transactionType   @title: 'Type';
  protocolVersion   @title: 'Protocol Version';
  identifier        @title: 'Identifier';
  status            @title: 'Result';
  paidFees          @title: 'Fees Paid';
  estimatedFees     @title: 'Fees Estimated';
  merkleTreeRoot    @title: 'Merkle Tree Root';
  startIndex        @title: 'Start Index';
  endIndex          @title: 'End Index';
  isShielded        @title: 'Shielded';
  zswapEventCount   @title: 'Zswap Events';
  unshieldedInputs  @title: 'Unshielded Inputs';
  unshieldedOutputs @title: 'Unshielded Outputs';
};

annotate service.TransactionSegments with @(
  UI.HeaderInfo : { TypeName: 'Segment', TypeNamePlural: 'Segments', Title: { Value: segmentId }, Description: { Value: transaction_hash } },
  UI.LineItem : [ { Value: transaction_hash }, { Value: segmentId }, { Value: success } ]
) {
  transaction @title: 'Transaction Hash';
  segmentId   @title: 'Segment';
  success     @title: 'Succeeded';
};

annotate service.ContractActions with @(
  UI.HeaderInfo : { TypeName: 'Contract Action', TypeNamePlural: 'Contract Actions', Title: { Value: entryPoint }, Description: { Value: address } },
  UI.SelectionFields : [ address, actionType, entryPoint, blockHeight ],
  UI.LineItem : [
    { Value: blockHeight }, { Value: transaction_hash }, { Value: position }, { Value: actionType }, { Value: address }, { Value: entryPoint }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: blockHeight, Descending: true } ] }
) {
  transaction @title: 'Transaction Hash'  @Common.ValueList: {
    Label: 'Transactions', CollectionPath: 'Transactions',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: transaction_hash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockHeight' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' }
    ]
  };
  position    @title: 'Position';
  address     @title: 'Contract Address';
  actionType  @title: 'Action';
  entryPoint  @title: 'Entry Point';
  blockHeight @title: 'Block Height';
};

annotate service.UnshieldedUtxos with @(
  UI.HeaderInfo : { TypeName: 'Unshielded UTXO', TypeNamePlural: 'Unshielded UTXOs', Title: { Value: intentHash }, Description: { Value: owner } },
  UI.SelectionFields : [ owner, tokenType ],
  UI.LineItem : [
    { Value: owner }, { Value: tokenType }, { Value: value }, { Value: intentHash }, { Value: outputIndex },
    { Value: createdAtTransaction_hash }, { Value: spentAtTransaction_hash }
  ]
) {
  intentHash           @title: 'Intent Hash';
  outputIndex          @title: 'Output';
  owner                @title: 'Owner Address';
  tokenType            @title: 'Token Type';
  value                @title: 'Value';
  createdAtTransaction @title: 'Created in Transaction'  @Common.ValueList: {
    Label: 'Transactions', CollectionPath: 'Transactions',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: createdAtTransaction_hash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockHeight' }
    ]
  };
  spentAtTransaction   @title: 'Spent in Transaction'  @Common.ValueList: {
    Label: 'Transactions', CollectionPath: 'Transactions',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: spentAtTransaction_hash, ValueListProperty: 'hash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'blockHeight' }
    ]
  };
};
