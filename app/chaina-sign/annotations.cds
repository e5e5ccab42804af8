using ChainASignService as service from '../../srv/chaina-sign/service';

// List and object pages for Fiori-style clients of the chain-A signing service: signing requests
// and their audit trail, the transactions verified and submitted that way, the signing policies,
// and the HSM this deployment signs with.

annotate service.SigningRequests with @(
  UI.HeaderInfo : { TypeName: 'Signing Request', TypeNamePlural: 'Signing Requests', Title: { Value: txHash }, Description: { Value: status } },
  UI.SelectionFields : [ status, signerType, senderAddress, chainState, network ],
  UI.LineItem : [
    { Value: createdAt }, { Value: status }, { Value: signerType }, { Value: senderAddress }, { Value: txHash }, { Value: expiresAt }, { Value: failureCode }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Request : { Data: [
    { Value: ID }, { Value: build_ID }, { Value: status }, { Value: signerType }, { Value: signerInfo }, { Value: senderAddress },
    { Value: txHash }, { Value: requestedBy }, { Value: failureCode }, { Value: failureReason }
  ] },
  UI.FieldGroup #Timeline : { Data: [
    { Value: createdAt }, { Value: expiresAt }, { Value: signedAt }, { Value: verifiedAt }, { Value: submittedAt }, { Value: updatedAt }
  ] },
  UI.FieldGroup #Chain : { Data: [
    { Value: network }, { Value: networkMagic }, { Value: systemStart }, { Value: chainState }, { Value: submission_ID }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Request', Label: 'Request', Target: '@UI.FieldGroup#Request' },
    { $Type: 'UI.ReferenceFacet', ID: 'Timeline', Label: 'Timeline', Target: '@UI.FieldGroup#Timeline' },
    { $Type: 'UI.ReferenceFacet', ID: 'Chain', Label: 'Chain', Target: '@UI.FieldGroup#Chain' },
    { $Type: 'UI.ReferenceFacet', ID: 'Audit', Label: 'Audit Trail', Target: 'auditEntries/@UI.LineItem' }
  ]
) {
  ID                 @title: 'Signing Request ID';
  owner              @title: 'Owner';
  build              @title: 'Build ID';
  status             @title: 'Status';
  signerType         @title: 'Signer Type';
  chainState         @title: 'Chain State';
  signerInfo         @title: 'Signer';
  senderAddress      @title: 'Sender';
  txHash             @title: 'Transaction Hash';
  unsignedTxCbor     @title: 'Unsigned Transaction (CBOR)';
  signedTxCbor       @title: 'Signed Transaction (CBOR)';
  cardanoCliCommand  @title: 'cardano-cli Command';
  cardanoCliEnvelope @title: 'cardano-cli Envelope';
  cardanoCliScript   @title: 'cardano-cli Script';
  verification       @title: 'Verification (JSON)';
  failureCode        @title: 'Failure Code';
  failureReason      @title: 'Failure Reason';
  requestedBy        @title: 'Requested By';
  createdAt          @title: 'Created';
  expiresAt          @title: 'Expires';
  signedAt           @title: 'Signed';
  verifiedAt         @title: 'Verified';
  submittedAt        @title: 'Submitted';
  updatedAt          @title: 'Updated';
  submission         @title: 'Submission ID';
  network            @title: 'Network';
  networkMagic       @title: 'Network Magic';
  systemStart        @title: 'System Start';
};

annotate service.SigningAuditLog with @(
  UI.HeaderInfo : { TypeName: 'Audit Entry', TypeNamePlural: 'Audit Log', Title: { Value: sequence }, Description: { Value: kind } },
  UI.SelectionFields : [ kind, signingRequest_ID, actor ],
  UI.LineItem : [ { Value: sequence }, { Value: occurredAt }, { Value: kind }, { Value: actor }, { Value: signingRequest_ID }, { Value: hash } ],
  UI.PresentationVariant : { SortOrder: [ { Property: sequence, Descending: true } ] },
  UI.FieldGroup #Entry : { Data: [
    { Value: sequence }, { Value: occurredAt }, { Value: kind }, { Value: actor }, { Value: signingRequest_ID }, { Value: details },
    { Value: previousHash }, { Value: hash }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Entry', Label: 'Audit Entry', Target: '@UI.FieldGroup#Entry' }
  ]
) {
  sequence       @title: 'Sequence';
  owner          @title: 'Owner';
  occurredAt     @title: 'Occurred';
  kind           @title: 'Event';
  signingRequest @title: 'Signing Request'  @Common.ValueList: {
    Label: 'Signing Requests', CollectionPath: 'SigningRequests',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: signingRequest_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'txHash' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'createdAt' }
    ]
  };
  actor          @title: 'Actor';
  details        @title: 'Details (JSON)';
  previousHash   @title: 'Previous Hash';
  hash           @title: 'Entry Hash';
};

annotate service.VerifiedTransactions with @(
  UI.HeaderInfo : { TypeName: 'Verified Transaction', TypeNamePlural: 'Verified Transactions', Title: { Value: txHash }, Description: { Value: signerType } },
  UI.SelectionFields : [ signerType, chainState, network, txHash ],
  UI.LineItem : [
    { Value: verifiedAt }, { Value: txHash }, { Value: signerType }, { Value: submittedAt }, { Value: network }, { Value: chainState }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: verifiedAt, Descending: true } ] },
  UI.FieldGroup #Transaction : { Data: [
    { Value: ID }, { Value: txHash }, { Value: signingRequest_ID }, { Value: build_ID }, { Value: submission_ID }, { Value: signerType },
    { Value: signerKeyHashes }, { Value: verifiedAt }, { Value: submittedAt }, { Value: network }, { Value: networkMagic },
    { Value: systemStart }, { Value: chainState }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Transaction', Label: 'Verified Transaction', Target: '@UI.FieldGroup#Transaction' }
  ]
) {
  ID              @title: 'ID';
  owner           @title: 'Owner';
  txHash          @title: 'Transaction Hash';
  signingRequest  @title: 'Signing Request'  @Common.ValueList: {
    Label: 'Signing Requests', CollectionPath: 'SigningRequests',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: signingRequest_ID, ValueListProperty: 'ID' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'status' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'txHash' }
    ]
  };
  build           @title: 'Build ID';
  submission      @title: 'Submission ID';
  signerType      @title: 'Signer Type';
  chainState      @title: 'Chain State';
  signerKeyHashes @title: 'Signer Key Hashes (JSON)';
  verifiedAt      @title: 'Verified';
  submittedAt     @title: 'Submitted';
  network         @title: 'Network';
  networkMagic    @title: 'Network Magic';
  systemStart     @title: 'System Start';
};

annotate service.SigningPolicies with @(
  UI.HeaderInfo : { TypeName: 'Signing Policy', TypeNamePlural: 'Signing Policies', Title: { Value: name }, Description: { Value: description } },
  UI.SelectionFields : [ active ],
  UI.LineItem : [ { Value: name }, { Value: description }, { Value: active }, { Value: modifiedAt }, { Value: modifiedBy } ],
  UI.FieldGroup #Policy : { Data: [
    { Value: name }, { Value: description }, { Value: active }, { Value: rules }, { Value: modifiedAt }, { Value: modifiedBy }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Policy', Label: 'Policy', Target: '@UI.FieldGroup#Policy' }
  ]
) {
  name        @title: 'Name';
  description @title: 'Description';
  rules       @title: 'Rules (JSON)';
  active      @title: 'Active';
  modifiedAt  @title: 'Modified';
  modifiedBy  @title: 'Modified By';
};

annotate service.HsmConfigurations with @(
  UI.HeaderInfo : { TypeName: 'HSM', TypeNamePlural: 'HSMs', Title: { Value: label }, Description: { Value: status } },
  UI.LineItem : [ { Value: label }, { Value: status }, { Value: keyLabel }, { Value: address }, { Value: network }, { Value: checkedAt } ],
  UI.FieldGroup #Hsm : { Data: [
    { Value: label }, { Value: modulePath }, { Value: slot }, { Value: keyLabel }, { Value: keyId }, { Value: requiredRole }, { Value: status },
    { Value: publicKeyHash }, { Value: address }, { Value: network }, { Value: errorCode }, { Value: errorMessage }, { Value: checkedAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Hsm', Label: 'HSM', Target: '@UI.FieldGroup#Hsm' }
  ]
) {
  label         @title: 'Label';
  modulePath    @title: 'PKCS#11 Module';
  slot          @title: 'Slot';
  keyLabel      @title: 'Key Label';
  keyId         @title: 'Key ID';
  requiredRole  @title: 'Required Role';
  status        @title: 'Status';
  publicKeyHash @title: 'Public Key Hash';
  address       @title: 'Address';
  network       @title: 'Network';
  errorCode     @title: 'Error Code';
  errorMessage  @title: 'Error Message';
  checkedAt     @title: 'Checked';
};
