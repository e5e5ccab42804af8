using OperatorService as service from '../../srv/operator/service';

// The operator console (app/console/webapp) reads these from the service's $metadata: each list's
// filter fields (UI.SelectionFields) and columns (UI.LineItem, whose actions without a row are the
// list's toolbar), each object page's title (UI.HeaderInfo), sections (UI.Facets of
// UI.FieldGroups) and buttons (UI.Identification, one DataFieldForAction per bound action); a list
// of a draft-enabled set can create a row unless UI.CreateHidden says no. Plans and key statuses
// are offered from the service's own entity sets (Common.ValueList).

annotate service.Keys with @(
  UI.HeaderInfo : { TypeName: 'Key', TypeNamePlural: 'Keys', Title: { Value: hint }, Description: { Value: label } },
  UI.SelectionFields : [ status, plan_name, label, boundAddress ],
  UI.LineItem : [
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.EntityContainer/issueKey', Label: 'Issue Key' },
    { Value: hint }, { Value: label }, { Value: plan_name }, { Value: status }, { Value: unitsLeft }, { Value: validUntil }, { Value: lastUsedAt }, { Value: createdAt }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Key : { Data: [
    { Value: ID }, { Value: hint }, { Value: label }, { Value: plan_name }, { Value: status }, { Value: boundAddress }, { Value: version }
  ] },
  UI.FieldGroup #Units : { Data: [ { Value: unitsLeft }, { Value: unitsLeased } ] },
  UI.FieldGroup #Dates : { Data: [
    { Value: createdAt }, { Value: validUntil }, { Value: lastUsedAt }, { Value: rotatedAt }, { Value: revokedAt }
  ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Key', Label: 'Key', Target: '@UI.FieldGroup#Key' },
    { $Type: 'UI.ReferenceFacet', ID: 'Units', Label: 'Units', Target: '@UI.FieldGroup#Units' },
    { $Type: 'UI.ReferenceFacet', ID: 'Dates', Label: 'Dates', Target: '@UI.FieldGroup#Dates' }
  ],
  UI.Identification : [
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.credit', Label: 'Credit' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.debit', Label: 'Debit' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.changePlan', Label: 'Change Plan' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.setExpiry', Label: 'Set Expiry' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.suspend', Label: 'Suspend' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.resume', Label: 'Resume' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.rotate', Label: 'Rotate' },
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.revoke', Label: 'Revoke' }
  ]
) {
  ID           @title: 'Key ID';
  hint         @title: 'Key';
  plan         @title: 'Plan'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Plans', CollectionPath: 'Plans',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: plan_name, ValueListProperty: 'name' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'description' }
    ]
  };
  unitsLeft    @title: 'Units Left';
  unitsLeased  @title: 'Units Leased';
  validUntil   @title: 'Valid Until';
  status       @title: 'Status'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Statuses', CollectionPath: 'KeyStatuses',
    Parameters: [ { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: status, ValueListProperty: 'code' } ]
  };
  boundAddress @title: 'Bound Address';
  label        @title: 'Label';
  createdAt    @title: 'Created';
  rotatedAt    @title: 'Rotated';
  revokedAt    @title: 'Revoked';
  lastUsedAt   @title: 'Last Used';
  version      @title: 'Version';
};

annotate service.Keys actions {
  credit     @(Common.Label: 'Credit')      (units @title: 'Units', reason @title: 'Reason');
  debit      @(Common.Label: 'Debit')       (units @title: 'Units', reason @title: 'Reason');
  changePlan @(Common.Label: 'Change Plan') (
    plan @title: 'Plan'  @Common.ValueListWithFixedValues  @Common.ValueList: {
      Label: 'Plans', CollectionPath: 'Plans',
      Parameters: [ { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: plan, ValueListProperty: 'name' } ]
    },
    reason @title: 'Reason'
  );
  setExpiry  @(Common.Label: 'Set Expiry')  (validUntil @title: 'Valid Until', reason @title: 'Reason');
  suspend    @(Common.Label: 'Suspend')     (reason @title: 'Reason');
  resume     @(Common.Label: 'Resume')      (reason @title: 'Reason');
  rotate     @(Common.Label: 'Rotate')      (reason @title: 'Reason');
  revoke     @(Common.Label: 'Revoke')      (reason @title: 'Reason');
};

annotate service.issueKey with (
  plan @title: 'Plan'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Plans', CollectionPath: 'Plans',
    Parameters: [ { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: plan, ValueListProperty: 'name' } ]
  },
  units        @title: 'Units',
  validDays    @title: 'Valid Days',
  label        @title: 'Label',
  boundAddress @title: 'Bound Address',
  reason       @title: 'Reason'
);

annotate service.createVouchers with (
  units     @title: 'Units per Code',
  count     @title: 'Codes',
  uses      @title: 'Uses per Code',
  expiresAt @title: 'Expires',
  label     @title: 'Label',
  reason    @title: 'Reason'
);

annotate service.KeyStatuses with @(
  UI.HeaderInfo : { TypeName: 'Key Status', TypeNamePlural: 'Key Statuses', Title: { Value: code }, Description: { Value: description } },
  UI.LineItem : [ { Value: code }, { Value: description }, { Value: servesCalls } ]
) {
  code        @title: 'Status';
  description @title: 'Meaning';
  servesCalls @title: 'Calls Served';
};

annotate service.LedgerEntries with @(
  UI.HeaderInfo : { TypeName: 'Ledger Entry', TypeNamePlural: 'Ledger Entries', Title: { Value: kind }, Description: { Value: createdAt } },
  UI.SelectionFields : [ apiKey_ID, kind, state, routeClass ],
  UI.LineItem : [
    { Value: createdAt }, { Value: apiKey_ID }, { Value: kind }, { Value: units }, { Value: state }, { Value: routeClass }, { Value: route }, { Value: note }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Entry : { Data: [
    { Value: ID }, { Value: apiKey_ID }, { Value: kind }, { Value: units }, { Value: state }, { Value: routeClass }, { Value: route },
    { Value: requestId }, { Value: outcome }, { Value: note }, { Value: reference }, { Value: leased }, { Value: createdAt }, { Value: resolvedAt }, { Value: renewedAt }
  ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Entry', Label: 'Entry', Target: '@UI.FieldGroup#Entry' } ]
) {
  ID         @title: 'Entry ID';
  apiKey     @title: 'Key ID';
  kind       @title: 'Kind';
  units      @title: 'Units';
  state      @title: 'State';
  routeClass @title: 'Route Class';
  route      @title: 'Route';
  requestId  @title: 'Request ID';
  outcome    @title: 'Outcome';
  note       @title: 'Note';
  reference  @title: 'Reference';
  createdAt  @title: 'Created';
  resolvedAt @title: 'Resolved';
  leased     @title: 'Units Leased';
  renewedAt  @title: 'Lease Renewed';
};

annotate service.Usage with @(
  UI.HeaderInfo : { TypeName: 'Usage', TypeNamePlural: 'Usage', Title: { Value: routeClass }, Description: { Value: day } },
  UI.SelectionFields : [ apiKey_ID, day, routeClass ],
  UI.LineItem : [ { Value: day }, { Value: apiKey_ID }, { Value: routeClass }, { Value: calls }, { Value: unitsCharged }, { Value: unitsRefunded } ],
  UI.PresentationVariant : { SortOrder: [ { Property: day, Descending: true } ] },
  UI.FieldGroup #Usage : { Data: [ { Value: apiKey_ID }, { Value: day }, { Value: routeClass }, { Value: calls }, { Value: unitsCharged }, { Value: unitsRefunded } ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Usage', Label: 'Usage', Target: '@UI.FieldGroup#Usage' } ]
) {
  apiKey_ID     @title: 'Key ID';
  day           @title: 'Day (UTC)';
  routeClass    @title: 'Route Class';
  calls         @title: 'Calls';
  unitsCharged  @title: 'Units Charged';
  unitsRefunded @title: 'Units Refunded';
};

annotate service.Grants with @(
  UI.HeaderInfo : { TypeName: 'Agent Grant', TypeNamePlural: 'Agent Grants', Title: { Value: tokenHint }, Description: { Value: product } },
  UI.SelectionFields : [ apiKey_ID, product, status ],
  UI.LineItem : [ { Value: tokenHint }, { Value: product }, { Value: apiKey_ID }, { Value: status }, { Value: label }, { Value: validUntil }, { Value: createdAt } ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Grant : { Data: [
    { Value: ID }, { Value: tokenHint }, { Value: product }, { Value: apiKey_ID }, { Value: status }, { Value: label }, { Value: allowedOperations },
    { Value: validUntil }, { Value: createdAt }, { Value: revokedAt }
  ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Grant', Label: 'Grant', Target: '@UI.FieldGroup#Grant' } ],
  UI.Identification : [ { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.revoke', Label: 'Revoke' } ]
) {
  ID                @title: 'Grant ID';
  apiKey            @title: 'Key ID';
  product           @title: 'Product';
  tokenHint         @title: 'Token';
  allowedOperations @title: 'Allowed Operations';
  status            @title: 'Status';
  label             @title: 'Label';
  validUntil        @title: 'Valid Until';
  createdAt         @title: 'Created';
  revokedAt         @title: 'Revoked';
};

annotate service.Grants actions {
  revoke @(Common.Label: 'Revoke') (reason @title: 'Reason');
};

annotate service.Plans with @(
  UI.HeaderInfo : { TypeName: 'Plan', TypeNamePlural: 'Plans', Title: { Value: name }, Description: { Value: description } },
  UI.SelectionFields : [ name ],
  UI.LineItem : [ { Value: name }, { Value: description }, { Value: units }, { Value: validityDays }, { Value: ratePerSecond }, { Value: burst } ],
  UI.FieldGroup #Plan : { Data: [ { Value: name }, { Value: description }, { Value: units }, { Value: validityDays } ] },
  UI.FieldGroup #Rate : { Data: [ { Value: ratePerSecond }, { Value: burst } ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Plan', Label: 'Plan', Target: '@UI.FieldGroup#Plan' },
    { $Type: 'UI.ReferenceFacet', ID: 'Rate', Label: 'Rate Limit', Target: '@UI.FieldGroup#Rate' }
  ]
) {
  name          @title: 'Plan';
  description   @title: 'Description';
  units         @title: 'Starting Units';
  validityDays  @title: 'Valid Days';
  ratePerSecond @title: 'Calls per Second';
  burst         @title: 'Burst';
};

// The route classes are the services' own: a price is edited, never created (the service refuses a new draft).
annotate service.Prices with @(
  UI.CreateHidden : true,
  UI.HeaderInfo : { TypeName: 'Price', TypeNamePlural: 'Prices', Title: { Value: routeClass }, Description: { Value: description } },
  UI.SelectionFields : [ routeClass ],
  UI.LineItem : [ { Value: routeClass }, { Value: units }, { Value: description } ],
  UI.FieldGroup #Price : { Data: [ { Value: routeClass }, { Value: units }, { Value: description } ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Price', Label: 'Price', Target: '@UI.FieldGroup#Price' } ]
) {
  routeClass  @title: 'Route Class';
  units       @title: 'Units per Call';
  description @title: 'Description';
};

annotate service.Packs with @(
  UI.HeaderInfo : { TypeName: 'Pack', TypeNamePlural: 'Packs', Title: { Value: name }, Description: { Value: description } },
  UI.SelectionFields : [ name, plan_name, active ],
  UI.LineItem : [ { Value: name }, { Value: description }, { Value: units }, { Value: lovelace }, { Value: plan_name }, { Value: active } ],
  UI.FieldGroup #Pack : { Data: [ { Value: name }, { Value: description }, { Value: units }, { Value: lovelace }, { Value: plan_name }, { Value: active } ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Pack', Label: 'Pack', Target: '@UI.FieldGroup#Pack' } ]
) {
  name        @title: 'Pack';
  description @title: 'Description';
  units       @title: 'Units';
  lovelace    @title: 'Price (lovelace)';
  plan        @title: 'Plan'  @Common.ValueListWithFixedValues  @Common.ValueList: {
    Label: 'Plans', CollectionPath: 'Plans',
    Parameters: [
      { $Type: 'Common.ValueListParameterInOut', LocalDataProperty: plan_name, ValueListProperty: 'name' },
      { $Type: 'Common.ValueListParameterDisplayOnly', ValueListProperty: 'description' }
    ]
  };
  active      @title: 'On Sale';
};

annotate service.Vouchers with @(
  UI.HeaderInfo : { TypeName: 'Voucher', TypeNamePlural: 'Vouchers', Title: { Value: hint }, Description: { Value: label } },
  UI.SelectionFields : [ label, createdAt ],
  UI.LineItem : [
    { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.EntityContainer/createVouchers', Label: 'Create Vouchers' },
    { Value: hint }, { Value: label }, { Value: units }, { Value: maxRedemptions }, { Value: redeemedCount }, { Value: expiresAt }, { Value: revokedAt }, { Value: createdAt }
  ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Voucher : { Data: [
    { Value: ID }, { Value: hint }, { Value: label }, { Value: units }, { Value: maxRedemptions }, { Value: redeemedCount },
    { Value: createdAt }, { Value: expiresAt }, { Value: revokedAt }
  ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Voucher', Label: 'Voucher', Target: '@UI.FieldGroup#Voucher' } ],
  UI.Identification : [ { $Type: 'UI.DataFieldForAction', Action: 'OperatorService.revoke', Label: 'Revoke' } ]
) {
  ID             @title: 'Voucher ID';
  hint           @title: 'Code';
  units          @title: 'Units';
  maxRedemptions @title: 'Uses';
  redeemedCount  @title: 'Redeemed';
  expiresAt      @title: 'Expires';
  revokedAt      @title: 'Revoked';
  label          @title: 'Label';
  createdAt      @title: 'Created';
};

annotate service.Vouchers actions {
  revoke @(Common.Label: 'Revoke') (reason @title: 'Reason');
};

annotate service.VoucherRedemptions with @(
  UI.HeaderInfo : { TypeName: 'Redemption', TypeNamePlural: 'Redemptions', Title: { Value: redeemedAt } },
  UI.LineItem : [ { Value: redeemedAt }, { Value: voucher_ID }, { Value: apiKey_ID } ]
) {
  voucher    @title: 'Voucher ID';
  apiKey     @title: 'Key ID';
  redeemedAt @title: 'Redeemed';
};

annotate service.AuditLog with @(
  UI.HeaderInfo : { TypeName: 'Audit Entry', TypeNamePlural: 'Audit Log', Title: { Value: action }, Description: { Value: target } },
  UI.SelectionFields : [ action, target, actor ],
  UI.LineItem : [ { Value: sequence }, { Value: occurredAt }, { Value: actor }, { Value: action }, { Value: target }, { Value: reason } ],
  UI.PresentationVariant : { SortOrder: [ { Property: sequence, Descending: true } ] },
  UI.FieldGroup #Entry : { Data: [ { Value: sequence }, { Value: occurredAt }, { Value: actor }, { Value: action }, { Value: target }, { Value: reason } ] },
  UI.FieldGroup #Change : { Data: [ { Value: before }, { Value: after } ] },
  UI.FieldGroup #Chain : { Data: [ { Value: previousHash }, { Value: hash } ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Entry', Label: 'Entry', Target: '@UI.FieldGroup#Entry' },
    { $Type: 'UI.ReferenceFacet', ID: 'Change', Label: 'Change', Target: '@UI.FieldGroup#Change' },
    { $Type: 'UI.ReferenceFacet', ID: 'Chain', Label: 'Hash Chain', Target: '@UI.FieldGroup#Chain' }
  ]
) {
  sequence     @title: 'Entry';
  occurredAt   @title: 'When';
  actor        @title: 'Operator';
  action       @title: 'Action';
  target       @title: 'Target';
  before       @title: 'Before';
  after        @title: 'After';
  reason       @title: 'Reason';
  previousHash @title: 'Previous Hash';
  hash         @title: 'Hash';
};

annotate service.WebhookSubscriptions with @(
  UI.HeaderInfo : { TypeName: 'Webhook Subscription', TypeNamePlural: 'Webhooks', Title: { Value: url }, Description: { Value: description } },
  UI.SelectionFields : [ url, active ],
  UI.LineItem : [ { Value: url }, { Value: events }, { Value: active }, { Value: balanceThreshold }, { Value: description }, { Value: modifiedAt } ],
  UI.FieldGroup #Subscription : { Data: [
    { Value: ID }, { Value: url }, { Value: events }, { Value: active }, { Value: balanceThreshold }, { Value: description },
    { Value: createdAt }, { Value: createdBy }, { Value: modifiedAt }, { Value: modifiedBy }
  ] },
  UI.Facets : [ { $Type: 'UI.ReferenceFacet', ID: 'Subscription', Label: 'Subscription', Target: '@UI.FieldGroup#Subscription' } ]
) {
  ID               @title: 'Subscription ID';
  url              @title: 'URL';
  events           @title: 'Events';
  active           @title: 'Active';
  balanceThreshold @title: 'Balance Threshold';
  description      @title: 'Description';
  secret           @title: 'Secret';
  createdAt        @title: 'Created';
  createdBy        @title: 'Created By';
  modifiedAt       @title: 'Changed';
  modifiedBy       @title: 'Changed By';
};

annotate service.WebhookDeliveries with @(
  UI.HeaderInfo : { TypeName: 'Webhook Delivery', TypeNamePlural: 'Webhook Deliveries', Title: { Value: event }, Description: { Value: createdAt } },
  UI.SelectionFields : [ subscription_ID, event, status ],
  UI.LineItem : [ { Value: createdAt }, { Value: event }, { Value: status }, { Value: attempts }, { Value: lastStatusCode }, { Value: deliveredAt } ],
  UI.PresentationVariant : { SortOrder: [ { Property: createdAt, Descending: true } ] },
  UI.FieldGroup #Delivery : { Data: [
    { Value: ID }, { Value: subscription_ID }, { Value: eventId }, { Value: event }, { Value: status }, { Value: attempts }, { Value: lastStatusCode },
    { Value: lastError }, { Value: createdAt }, { Value: lastAttemptAt }, { Value: nextAttemptAt }, { Value: deliveredAt }
  ] },
  UI.FieldGroup #Payload : { Data: [ { Value: payload } ] },
  UI.Facets : [
    { $Type: 'UI.ReferenceFacet', ID: 'Delivery', Label: 'Delivery', Target: '@UI.FieldGroup#Delivery' },
    { $Type: 'UI.ReferenceFacet', ID: 'Payload', Label: 'Payload', Target: '@UI.FieldGroup#Payload' }
  ]
) {
  ID             @title: 'Delivery ID';
  subscription   @title: 'Subscription ID';
  eventId        @title: 'Event ID';
  event          @title: 'Event';
  payload        @title: 'Payload';
  status         @title: 'Status';
  attempts       @title: 'Attempts';
  lastStatusCode @title: 'Last Status';
  lastError      @title: 'Last Error';
  createdAt      @title: 'Created';
  lastAttemptAt  @title: 'Last Attempt';
  nextAttemptAt  @title: 'Next Attempt';
  deliveredAt    @title: 'Delivered';
};
